"""evotune's built-in chess engine: a numba core (material + mobility, alpha-beta, quiescence)
with a python-chess boundary. See docs/internals.md for the exact contracts."""
from __future__ import annotations

from .api import (MATE, Adjudication, GameOutcome, SearchResult, evaluate, features, perft,
                  perft_divide, play_game, search)

__all__ = ["MATE", "Adjudication", "GameOutcome", "SearchResult", "evaluate", "features", "perft",
           "perft_divide", "play_game", "search"]
