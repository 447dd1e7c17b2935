"""The run kinds, each registered once: games runs (:mod:`.games`), Texel fits (:mod:`.fit`),
net trainings (:mod:`.training`) and move-model trainings (:mod:`.moves`), each a
:class:`~evotune.runs.runkind.RunKind`. The commands ask a run's kind (:func:`kind_of`) for its
status, row, continuation, report, plots, export, verification and recommendation, and never
test a kind's name.

This package sits between the commands (cli, experiments) and reporting: a kind binds its
lifecycle (runs, tuning, learn) to its readers (reporting) and its verification (verify). A new
kind is a package here (config, solver, view, kind: as :mod:`.games`, :mod:`.fit`,
:mod:`.training` and :mod:`.moves` are) and one line below (``tests/test_run_kinds.py`` adds a
toy kind from a test alone); the games kind keeps its config and plan in ``runs/``, which the
store reads.
"""
from __future__ import annotations

from ..runs.runkind import RunKind, kind_named, kind_of, kinds, register
from .fit import FIT
from .games import GAMES
from .moves import MOVES
from .training import TRAINING

for _kind in (GAMES, FIT, TRAINING, MOVES):
    register(_kind)

__all__ = ["FIT", "GAMES", "MOVES", "TRAINING", "RunKind", "kind_named", "kind_of", "kinds", "register"]
