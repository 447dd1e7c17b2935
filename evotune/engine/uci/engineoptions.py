"""The built-in engine's UCI options: every weight of its engine spec is a spin option named by
its ``option`` field, with the weight's value as default and its bounds as min/max (a fixed
weight: min = max = its reference); an ``nnue`` spec's net is the string option ``EvalFile``.
Their ``option`` lines for the ``uci`` answer, and ``setoption`` read and checked; the engine
(:class:`~evotune.engine.uci.frontend.UciEngine`) applies what they return."""
from __future__ import annotations

from ...spec.model import EngineSpec

EVAL_FILE = "EvalFile"
"""The string option of an ``nnue`` spec's net (the file's path)."""


def option_lines(spec: EngineSpec, weights, net_path: str) -> list[str]:
    """The ``option`` lines of the ``uci`` answer: a spin option per weight of ``spec`` (default:
    its value in ``weights``), then ``EvalFile`` when a net is played (``net_path``)."""
    lines = []
    for i, w in enumerate(spec.weights):
        lo, hi = (w.reference, w.reference) if w.fixed else (w.lower, w.upper)
        lines.append(f"option name {w.option_name} type spin default {int(round(weights[i]))} "
                     f"min {int(round(lo))} max {int(round(hi))}")
    if net_path:
        lines.append(f"option name {EVAL_FILE} type string default {net_path}")
    return lines


def parse_setoption(args: list[str]) -> tuple[str, list[str]]:
    """(option name, the tokens of its value) of ``setoption <args>``; ValueError when it does
    not start with ``name``."""
    if not args or args[0] != "name":
        raise ValueError("expected 'setoption name <Option> value <v>'")
    cut = args.index("value") if "value" in args else len(args)
    return " ".join(args[1:cut]), args[cut + 1:]


class SpinOptions:
    """The spin options of an engine spec's weights, looked up by name in any case."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        self._by_name = {w.option_name.lower(): (i, w) for i, w in enumerate(spec.weights)}

    def value(self, name: str, tokens: list[str]) -> tuple[int, float]:
        """(weight index, value) of ``setoption name <name> value <tokens>``; ValueError on an
        unknown option, a missing or malformed value or one outside the option's min/max."""
        if name.lower() not in self._by_name:
            known = ", ".join(w.option_name for w in self.spec.weights)
            raise ValueError(f"unknown option '{name}'; options are {known}")
        i, w = self._by_name[name.lower()]
        if not tokens:
            raise ValueError(f"option '{w.option_name}' needs a value")
        value = float(int(tokens[0]))
        lo, hi = (w.reference, w.reference) if w.fixed else (w.lower, w.upper)
        if not lo <= value <= hi:
            raise ValueError(f"{w.option_name} {value:g} is outside [{lo:g}, {hi:g}]")
        return i, value
