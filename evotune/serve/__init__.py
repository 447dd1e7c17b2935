"""The tune page (``evotune serve``): a live, read-only web page of every run of a runs folder.

- :mod:`.views`: what the pages show, as JSON-ready dicts, read through the run kinds' views
  (never a write, a lock or a repair), each cached under the signature of the run's files;
- :mod:`.weights`, :mod:`.journals`, :mod:`.matches`, :mod:`.facts`: a run's weights (its
  first look and the trajectories fetched later), game logs read incrementally, the match
  folders of ``match --out`` and ``verify``, a fit's and a training's facts;
- :mod:`.app`: the Flask application (GET only; the runs folder and ``static/`` only; the
  access token of a non-loopback address);
- :mod:`.server`: its threaded server (foreground for the command, a thread for tests);
- ``static/``: the pages, their scripts and uPlot (shipped: no CDN; see static/README.md).

Flask is the ``serve`` extra: this package's modules import it, so only ``evotune serve``
imports them (its command says so in one line when the extra is missing).
"""
