"""No two modules of evotune share a basename for two different concepts (docs/architecture.md,
"Module names"): the names that recur are listed here with their places and the reason."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import evotune

ROOT = Path(evotune.__file__).resolve().parent

RECURRING = {
    # one concept at two layers
    "experiments": {"cli", "."},  # the command group of experiments.py
    "start": {"kinds/games", "spec"},  # where a run begins: the spec of its weights, a games run's start
    # a run kind's parts, each in its package (kinds/games/, kinds/fit/, kinds/training/,
    # kinds/moves/): its config and plan beside its solver, view and lifecycle glue (kind),
    # with the wording every kind's view shares in kinds/view.py
    "config": {"kinds/games", "kinds/fit", "kinds/training", "kinds/moves"},
    "plan": {"kinds/games", "kinds/fit", "kinds/training"},
    "solver": {"kinds/games", "kinds/fit", "kinds/training", "kinds/moves"},
    "kind": {"kinds/games", "kinds/fit", "kinds/training", "kinds/moves"},
    "view": {"kinds", "kinds/games", "kinds/training", "kinds/moves"},
}
"""Basename -> the packages (relative to evotune/) that hold a module of that name."""

FAMILIES = ("net", "uci", "movemodel")
"""The engine's module families that are packages (engine/net/, engine/uci/, engine/movemodel/)."""


def _places() -> dict[str, set[str]]:
    places: dict[str, set[str]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        if path.name != "__init__.py":
            places[path.stem].add(path.parent.relative_to(ROOT).as_posix())
    return places


def test_no_module_name_recurs_but_the_listed_ones():
    recurring = {name: where for name, where in _places().items() if len(where) > 1}
    unlisted = {name: sorted(where) for name, where in recurring.items()
                if where - RECURRING.get(name, set())}
    assert not unlisted, f"module names that recur for another concept: {unlisted}"
    assert "reference" not in recurring and "search" not in recurring  # renamed in round 5
    # the training and move-model kinds are packages: their modules no longer recur by name
    # beside reporting/'s (engine/core/moves.py, the move encoding, is the only 'moves')
    assert "training" not in recurring and "moves" not in recurring
    # the run kinds' protocol is runs/runkind.py, not a second 'kinds' beside the kinds/ package
    assert "kinds" not in _places() and "runkind" in _places()


def test_the_engine_families_are_packages_not_prefixes():
    flat = sorted(p.name for p in (ROOT / "engine").glob("*.py")
                  if p.stem.startswith(FAMILIES) or p.stem in ("movecore", "timeman"))
    assert flat == [], flat
    for family in FAMILIES:
        assert (ROOT / "engine" / family / "__init__.py").is_file()
