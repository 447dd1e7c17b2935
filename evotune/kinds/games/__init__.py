"""The games kind, one package: tuning runs by games (``evotune run``). Its config
(:mod:`.config`: :class:`~.config.RunConfig`, with the grouped records of :mod:`.settings`), its
frozen plan (:mod:`.plan`), its lifecycle (:mod:`.lifecycle`: checked before anything is written,
created, reopened with its identity, :mod:`.identity`, checked), its start (:mod:`.start`:
``--init-from``), its solver (:mod:`.solver`: a :class:`Solver` steps one stored generation at a
time, :func:`execute` runs it to its stop), its final check's match (:mod:`.finalmatch`), its
budget raised on resume (:mod:`.budget`), its view (:mod:`.view`: progress, generation and
summary lines) and its lifecycle glue (:mod:`.kind`, :data:`GAMES`).

The layers below the kinds never name its config: the store reads a manifest through the kind
registry, and verify, reporting and the tune page ask a config's
:class:`~evotune.runs.registry.WeightsConfig` members. Its scoring by games
(:mod:`evotune.tuning`: the fitness, the rating model) stays a layer of its own, as a fit's
numerics stay in :mod:`evotune.learn`."""
from __future__ import annotations

from .kind import GAMES, GAMES_STORED, GamesKind
from .solver import RunProgress, RunSummary, Solver, execute

__all__ = ["GAMES", "GAMES_STORED", "GamesKind", "RunProgress", "RunSummary", "Solver",
           "execute"]
