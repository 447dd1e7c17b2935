"""evotune's built-in chess engine: a numba core (alpha-beta, quiescence, a linear evaluation of a
chosen feature set: shannon, pst, extended) with a python-chess boundary. See docs/internals.md
for the exact contracts."""
from __future__ import annotations

from .api import (
                  FEATURE_SETS,
                  MATE,
                  Adjudication,
                  GameOutcome,
                  PhiBatch,
                  QuiescenceResult,
                  SearchResult,
                  evaluate,
                  feature_names,
                  features,
                  iterate,
                  phi,
                  phi_batch,
                  play_game,
                  qsearch,
                  search,
)
from .core import compile_estimate, record_compile
from .core import is_compiled as core_is_compiled
from .perftsuite import perft, perft_divide
from .searches import SearchTree

__all__ = ["FEATURE_SETS", "MATE", "Adjudication", "GameOutcome", "PhiBatch", "QuiescenceResult",
           "SearchResult", "SearchTree", "compile_estimate", "core_is_compiled",
           "evaluate", "feature_names", "features", "iterate", "perft",
           "perft_divide", "phi", "phi_batch", "play_game", "qsearch", "record_compile", "search"]
