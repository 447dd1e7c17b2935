"""Verification of a run (``evotune verify``): plays its recommended weights (a training: its
net) against the reference and its start on held-out openings and stores ``verify.json`` in the
run (:mod:`.run`); the words of that record (:mod:`.text`). Sits above tuning and learn (it
plays with a games run's match settings and a training's nets) and below reporting, which only
reads what this stores."""
