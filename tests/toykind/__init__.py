"""A toy run kind written as a kind is: one package (its config and manifest reader in
:mod:`.config`, its lifecycle and view in :mod:`.kind`) and one line that registers it
(``register(TOY)``, the line a built-in kind has in ``evotune/kinds/__init__.py``). Nothing of
evotune names it: tests/test_run_kinds.py counts its files and runs it through the commands."""
from __future__ import annotations

from .config import ToyConfig, read_toy
from .kind import TOY, ToyKind

__all__ = ["TOY", "ToyConfig", "ToyKind", "read_toy"]
