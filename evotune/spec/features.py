"""Feature sets of the built-in engine: their names, sizes and the layout of their weight vectors.

The evaluation is linear in the weights, ``eval = w . phi(position)``; a feature set names phi.
This module is plain Python (no numba, no python-chess) so that configuration and consumers can
read names cheaply; the numba core (``engine/core/eval_*.py``) compiles the offsets below in, and
its cache folder is keyed on this file too. docs/internals.md ("Feature sets") defines every term.

* ``shannon`` (6): material differences P, N, B, R, Q and the mobility difference.
* ``pst`` (778): tapered material (mg and eg, P..Q) and piece-square tables (mg and eg, six
  pieces x 64 squares from White's view; a black piece on square s uses s ^ 56).
* ``extended`` (824): ``pst`` followed by 46 classical terms, each tapered (mg and eg).

Tapered sets (``pst``, ``extended``): raw terms count White minus Black; with
``phase = min(24, N + B + 2 R + 4 Q)`` (both sides) and s = +1 when White is to move, -1 when
Black is, the core's integer feature vector is ``phi_int[mg term] = s * raw * phase`` and
``phi_int[eg term] = s * raw * (24 - phase)``, the evaluation ``w . phi_int / 24`` rounded toward
zero and the
learning vector ``phi = phi_int / 24`` (phase folded in). For ``shannon`` phi_int is phi.
"""
from __future__ import annotations

import re
from functools import cache

from ..errors import ConfigError
from ..space import SHANNON_NAMES

FEATURE_SETS = ("shannon", "pst", "extended")
"""The linear feature sets, in the order of their codes (0, 1, 2) in the core."""
FS_SHANNON, FS_PST, FS_EXTENDED = 0, 1, 2
NNUE = "nnue"
"""The network evaluation (engine/net/network.py, engine/core/nnue.py): not a linear feature set (no
weight vector, no phi), but it shares the core's dispatch on the code below."""
NETS = (NNUE,)
"""The evaluations that are networks read from a file (a spec's ``net``, ``SPEC:FILE``); the
engine's values of every evaluation are in engine/evaluation.py."""
FS_NNUE = 3
NNUE_EVAL_LIMIT = 100_000
"""The core clamps a network's evaluation to +-this (far from the mate scores of rules.py)."""

PIECES = ("pawn", "knight", "bishop", "rook", "queen", "king")
FILES = "abcdefgh"
SQUARES = tuple(f + r for r in "12345678" for f in FILES)
"""Square names, a1 = 0 .. h8 = 63 (python-chess order)."""
PHASE_MAX = 24
"""The phase of a position with all its pieces; a tapered set's phi_int is 24 x phi."""

# ---- pst: offsets in the weight vector ----------------------------------------------------------
MAT_MG = 0
"""material.mg.{pawn..queen}: 5 weights."""
MAT_EG = 5
PST_MG = 10
"""pst.mg.<piece>.<square>: 6 x 64 weights, index PST_MG + 64 * (type - 1) + square."""
PST_EG = PST_MG + 6 * 64
PST_SIZE = PST_EG + 6 * 64          # 778

# ---- extended: raw terms (White minus Black), each with an mg and an eg weight -------------------
EXT_TERMS = (
    ("bishop_pair", ("",)),
    ("doubled", ("",)),
    ("isolated", ("",)),
    ("backward", ("",)),
    ("passed", tuple(f"rank{r}" for r in range(2, 8))),
    ("rook_open", ("",)),
    ("rook_semiopen", ("",)),
    ("mobility", ("knight", "bishop", "rook", "queen")),
    ("shelter", ("near", "far")),
    ("king_attack", ("knight", "bishop", "rook", "queen")),
    ("tempo", ("",)),
)
"""(term, details): the raw terms in core order; the weights of a term are its mg details then
its eg details (``passed.mg.rank2 .. passed.mg.rank7, passed.eg.rank2 ..``)."""


def _ext_layout():
    raw: list[tuple[str, str]] = []
    mg_index: list[int] = []
    eg_index: list[int] = []
    names: list[str] = []
    at = PST_SIZE
    for term, details in EXT_TERMS:
        n = len(details)
        for i, d in enumerate(details):
            raw.append((term, d))
            mg_index.append(at + i)
            eg_index.append(at + n + i)
        for phase in ("mg", "eg"):
            names.extend(f"{term}.{phase}.{d}" if d else f"{term}.{phase}" for d in details)
        at += 2 * n
    return tuple(raw), tuple(mg_index), tuple(eg_index), tuple(names)


EXT_RAW, EXT_MG_INDEX, EXT_EG_INDEX, _EXT_NAMES = _ext_layout()
"""EXT_RAW[k] = (term, detail) of raw term k; its weights are EXT_MG_INDEX[k], EXT_EG_INDEX[k]."""
N_RAW = len(EXT_RAW)                # 23


def _raw(term: str, detail: str = "") -> int:
    return EXT_RAW.index((term, detail))


R_BISHOP_PAIR = _raw("bishop_pair")
R_DOUBLED = _raw("doubled")
R_ISOLATED = _raw("isolated")
R_BACKWARD = _raw("backward")
R_PASSED = _raw("passed", "rank2")          # + relative rank - 1
R_ROOK_OPEN = _raw("rook_open")
R_ROOK_SEMIOPEN = _raw("rook_semiopen")
R_MOBILITY = _raw("mobility", "knight")     # + type - 2 (knight .. queen)
R_SHELTER_NEAR = _raw("shelter", "near")
R_SHELTER_FAR = _raw("shelter", "far")
R_KING_ATTACK = _raw("king_attack", "knight")  # + type - 2
R_TEMPO = _raw("tempo")
EXT_SIZE = PST_SIZE + 2 * N_RAW     # 824


@cache
def feature_names(features: str = "shannon") -> tuple[str, ...]:
    """The weight names of a feature set, in engine order."""
    code = feature_set_code(features)
    if code == FS_SHANNON:
        return SHANNON_NAMES
    names = [f"material.{ph}.{p}" for ph in ("mg", "eg") for p in PIECES[:5]]
    names += [f"pst.{ph}.{p}.{sq}" for ph in ("mg", "eg") for p in PIECES for sq in SQUARES]
    if code == FS_EXTENDED:
        names += _EXT_NAMES
    return tuple(names)


def feature_set_code(features: str) -> int:
    """0, 1, 2 for shannon, pst, extended; ConfigError for anything else."""
    if features not in FEATURE_SETS:
        raise ConfigError(f"unknown feature set {features!r}; use one of "
                          f"{', '.join(FEATURE_SETS)}")
    return FEATURE_SETS.index(features)


def size(features: str) -> int:
    """Number of weights of a feature set."""
    return len(feature_names(features))


def is_net(features: str) -> bool:
    """True when a spec's ``features`` names a network (:data:`NETS`), not a feature set: the one
    test of the name, for the spec's own rules (a ``net`` key, no ``reference_file``, alpha-beta
    only); everything else asks the engine's Evaluation (engine/evaluation.py)."""
    return features in NETS


def denominator(features: str) -> int:
    """phi = phi_int / denominator: 1 for shannon, 24 for the tapered sets."""
    return 1 if feature_set_code(features) == FS_SHANNON else PHASE_MAX


def is_tapered(features: str) -> bool:
    """True for the sets with middlegame and endgame weights."""
    return feature_set_code(features) != FS_SHANNON


# ---- names read as structure -------------------------------------------------------------------

PHASES = ("mg", "eg")
"""Phases of a tapered evaluation: middle game, end game."""
_PST = re.compile(r"pst\.(mg|eg)\.(pawn|knight|bishop|rook|queen|king)\.([a-h][1-8])")


def square_index(square: str) -> int:
    """'a1' -> 0, 'h8' -> 63."""
    return FILES.index(square[0]) + 8 * (int(square[1]) - 1)


def pst_cell(name: str) -> tuple[str, str, int] | None:
    """(phase, piece, square index) of a piece-square weight name ``pst.<phase>.<piece>.<square>``,
    else None."""
    m = _PST.fullmatch(name)
    if m is None:
        return None
    return m.group(1), m.group(2), square_index(m.group(3))
