"""evotune: tune a chess engine's evaluation weights by evolution."""
from __future__ import annotations

__version__ = "0.1.0"
