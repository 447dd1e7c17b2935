"""Weight names read as structure: piece-square tables, scalar groups, nested JSON objects.

Everything is derived from the names alone (the feature-name contract of docs/internals.md),
never from positions in the vector or a count:

- ``pst.<phase>.<piece>.<square>`` (phase mg/eg, piece pawn..king, square a1..h8 from White's
  view) is one cell of a piece-square table; :func:`pst_layout` finds the tables of a run;
- every other name is a scalar term ``<term>[.<phase>[.<detail>]]``; :func:`scalar_groups` puts
  terms that belong on one axis together (``material.mg``: pawn..queen; ``passed.eg``: rank2..7),
  never more than :data:`MAX_LINES` per group;
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..spec.features import PHASES, PIECES, pst_cell

MAX_LINES = 8
"""Most lines a scalar convergence panel carries."""
MANY_WEIGHTS = 12
"""Runs with more free weights than this (or with any table) get the many-weight plots."""


def pst_layout(names: Sequence[str]) -> dict[tuple[str, str], np.ndarray]:
    """``{(phase, piece): int array (64,)}``: the index in ``names`` of each square's weight (-1
    where the run has none), for every table that has at least one square; phases then pieces in
    :data:`PHASES` / :data:`PIECES` order."""
    found: dict[tuple[str, str], np.ndarray] = {}
    for i, name in enumerate(names):
        cell = pst_cell(name)
        if cell is not None:
            phase, piece, sq = cell
            found.setdefault((phase, piece), np.full(64, -1, dtype=np.int64))[sq] = i
    return {key: found[key] for phase in PHASES for piece in PIECES
            if (key := (phase, piece)) in found}


def board(values, index: np.ndarray) -> np.ndarray:
    """The 8x8 float array of one table: ``[rank, file]`` with rank 1 in row 0 (NaN where the
    run has no weight). ``values`` is a full weight vector."""
    v = np.asarray(values, dtype=np.float64)
    out = np.where(index >= 0, v[np.maximum(index, 0)], np.nan)
    return out.reshape(8, 8)


def table_name(phase: str, piece: str) -> str:
    return f"pst.{phase}.{piece}"


def scalar_indices(names: Sequence[str], among: Iterable[int] | None = None) -> list[int]:
    """Indices of the names that are not piece-square cells (in ``among`` if given)."""
    idx = range(len(names)) if among is None else among
    return [i for i in idx if pst_cell(names[i]) is None]


def _group_key(name: str) -> str:
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def scalar_groups(names: Sequence[str], among: Iterable[int] | None = None
                  ) -> list[tuple[str, list[int]]]:
    """Scalar weights grouped for one axis each: ``[(title, [indices])]`` in first-seen order.

    ``term.phase.detail`` names group by ``term.phase``, ``term.phase`` and plain names by
    ``term`` (so ``bishop_pair.mg`` and ``bishop_pair.eg`` share an axis); a group of more than
    :data:`MAX_LINES` is split into numbered parts.
    """
    groups: dict[str, list[int]] = {}
    for i in scalar_indices(names, among):
        groups.setdefault(_group_key(names[i]), []).append(i)
    out = []
    for key, idx in groups.items():
        if len(idx) <= MAX_LINES:
            out.append((key, idx))
            continue
        parts = [idx[k:k + MAX_LINES] for k in range(0, len(idx), MAX_LINES)]
        out += [(f"{key} ({n + 1}/{len(parts)})", p) for n, p in enumerate(parts)]
    return out


def short_label(name: str, group: str) -> str:
    """The part of ``name`` after its group's key ('material.mg.knight' in 'material.mg' ->
    'knight'); the whole name when nothing is left."""
    key = group.split(" (")[0]
    rest = name[len(key) + 1:] if name.startswith(key + ".") else ""
    return rest or name


def is_many(names: Sequence[str], free: Sequence[int]) -> bool:
    """True when a run needs the many-weight plots and report layout."""
    return len(free) > MANY_WEIGHTS or bool(pst_layout(names))


def brief(names: Sequence[str], values, fmt=lambda n, v: f"{n}={v:.0f}", *,
          limit: int = MANY_WEIGHTS, sep: str = " ") -> str:
    """One line of ``name value`` items: all of them for up to ``limit`` weights, else the first
    few scalar terms and a count (a progress line never lists 800 weights)."""
    items = list(zip(names, values))
    if len(items) <= limit:
        return sep.join(fmt(n, v) for n, v in items)
    scalars = [(n, v) for n, v in items if pst_cell(n) is None][:MAX_LINES]
    return sep.join(fmt(n, v) for n, v in scalars) + \
        f"{sep}... ({len(items)} weights; evotune report / export show them all)"


def clock(seconds: float) -> str:
    """Seconds as 'm:ss' or 'h:mm:ss'."""
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
