"""Engine specs with many weights named by the feature-name contract (docs/internals.md), for
testing plots, reports, exports and players: the engine's ``pst`` set (778 weights:
material.<mg|eg>.<piece>, pst.<mg|eg>.<piece>.<square>) and, with ``extra``, its ``extended``
set (the classical terms after it: bishop_pair.mg, passed.eg.rank2, mobility.mg.knight, ...).
A builtin spec's weights are its feature set's, so the spec names the set.
"""
from __future__ import annotations

from pathlib import Path

from evotune.featuresets import PST_SIZE, feature_names
from evotune.featuresets import PIECES, SQUARES

MATERIAL = {"mg": (100, 300, 330, 500, 900), "eg": (120, 280, 300, 520, 950)}
EXTRA = list(feature_names("extended")[PST_SIZE:])


def pst_weights(extra: bool = False) -> list[dict]:
    """The [[weight]] tables: material (pawn mg fixed at 100), zero tables in [-150, 150]."""
    out = []
    for phase, values in MATERIAL.items():
        for piece, v in zip(PIECES[:5], values):
            w = {"name": f"material.{phase}.{piece}", "reference": v, "lower": 0, "upper": 1500}
            if phase == "mg" and piece == "pawn":
                w.update(fixed=True, lower=100, upper=100)
            out.append(w)
    for phase in ("mg", "eg"):
        for piece in PIECES:
            for sq in SQUARES:
                out.append({"name": f"pst.{phase}.{piece}.{sq}", "reference": 0,
                            "lower": -150, "upper": 150})
    if extra:
        out += [{"name": n, "reference": 10, "lower": -100, "upper": 200} for n in EXTRA]
    return out


def write_spec(folder: Path, name: str = "pst-test", *, extra: bool = False,
               kind: str = "uci") -> Path:
    """Write the spec as TOML; returns its path (give it as --engine / SPEC). It is a 'uci'
    spec (an external engine may name its weights freely; a builtin spec's names are those of
    its feature set), so runs are made with synthetic outcomes, not played."""
    lines = [f'name = "{name}"', f'kind = "{kind}"']
    if kind == "builtin":
        lines.append(f'features = "{"extended" if extra else "pst"}"')
    if kind == "uci":
        lines.append('command = ["/bin/true"]')
    for w in pst_weights(extra):
        lines.append("[[weight]]")
        for k, v in w.items():
            lines.append(f"{k} = " + (f'"{v}"' if isinstance(v, str) else
                                      ("true" if v is True else str(v))))
    path = Path(folder) / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
