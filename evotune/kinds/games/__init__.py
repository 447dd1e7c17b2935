"""The games kind, one package: tuning runs by games (``evotune run``). Its solver
(:mod:`.solver`: a :class:`Solver` steps one stored generation at a time, :func:`execute` runs
it to its stop), its budget raised on resume (:mod:`.budget`), its view (:mod:`.view`: progress,
generation and summary lines) and its lifecycle glue (:mod:`.kind`, :data:`GAMES`).

Its config (:class:`evotune.runs.config.RunConfig`, with the grouped records of
:mod:`evotune.runs.gamesettings`) and its frozen plan (:mod:`evotune.runs.plan`) sit low, in
``runs/``, because the layers below the kinds read them as values: the store reads a run's
manifest as a RunConfig (every format-1 manifest was one), and verify and reporting read a
games run's config as a value. Its scoring by games (:mod:`evotune.tuning`: the fitness, the rating
model, the final check's match) stays a layer of its own, as a fit's numerics stay in
:mod:`evotune.learn`."""
from __future__ import annotations

from .kind import GAMES, GAMES_STORED, GamesKind
from .solver import RunProgress, RunSummary, Solver, execute

__all__ = ["GAMES", "GAMES_STORED", "GamesKind", "RunProgress", "RunSummary", "Solver",
           "execute"]
