"""An engine spec as values: :class:`EngineSpec` (the weights an engine exposes, how to start it,
how names and scales map) and :class:`WeightParam` (one weight). :mod:`evotune.spec.file` reads
spec files (``engines/*.toml``) into them; :mod:`evotune.spec.start` gives a spec other start
values."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..space import WeightSpace
from .features import is_net
from .searchsettings import SearchSettings

NET_MAX_ABS = 100_000
"""The largest magnitude of a net's output layer as weights: its weights and bias are int16, its
scale at most 100000 (engine/net/network.py's SCALE_MAX)."""


@dataclass(frozen=True)
class WeightParam:
    """One weight an engine exposes."""

    name: str
    """Weight name (evotune's vocabulary, e.g. 'knight')."""
    reference: float
    """Reference value in evotune units (pawn = 100)."""
    lower: float
    """Lower bound in evotune units."""
    upper: float
    """Upper bound in evotune units."""
    fixed: bool = False
    """True when the weight is never tuned."""
    option: str = ""
    """The engine's parameter / UCI option name for this weight ('' = same as name)."""
    scale: float = 1.0
    """Engine value = round(evotune value * scale)."""

    @property
    def option_name(self) -> str:
        return self.option or self.name


@dataclass(frozen=True)
class EngineSpec:
    """An engine: the weights it exposes, how to start it and how names and scales map."""

    name: str
    """Short name, used in PGN headers and exports."""
    kind: str
    """'builtin' (evotune's own engine) or 'uci' (an external engine started by command)."""
    weights: tuple[WeightParam, ...]
    """The weights, in order."""
    command: tuple[str, ...] = ()
    """The command line that starts a 'uci' engine."""
    options: tuple[tuple[str, object], ...] = ()
    """Fixed UCI options sent at start (name, value)."""
    description: str = ""
    """One line about the engine."""
    path: str = ""
    """The file the spec was read from."""
    features: str = "shannon"
    """Feature set of a 'builtin' engine: shannon, pst or extended (evotune/spec/features.py), or
    nnue (a network, no weights)."""
    net: str = ""
    """The network file an 'nnue' spec names (absolute path), or ''."""
    reference_file: str = ""
    """A JSON file of reference values the spec names (part of a run's identity), or ''."""
    digest: str = ""
    """sha256 of the spec file (combined with its reference file's when it names one): part of
    a run's identity; '' for a spec not read from a file."""
    text: str = dataclasses.field(default="", repr=False, compare=False)
    """The spec file's text as read ('' for a spec not read from a file): a run stores it."""
    file_digest: str = dataclasses.field(default="", repr=False, compare=False)
    """sha256 of the spec file alone (``digest`` before the reference file joins it)."""
    reference_text: str = dataclasses.field(default="", repr=False, compare=False)
    """The text of the reference file the spec names ('' when it names none)."""
    search: SearchSettings = SearchSettings()
    """How a 'builtin' engine searches (the ``[search]`` table; its numeric parameters are the
    last weights, :meth:`SearchSettings.weight_names`, here at their reference values)."""
    start_values: str = dataclasses.field(default="", repr=False, compare=False)
    """Reference values that replaced the spec's own
    (:func:`~evotune.spec.start.with_start_values`): a JSON object ``{name: value}`` over every
    weight, as a run started from earlier weights stores it; '' when the spec's own reference
    values stand."""
    start_source: str = ""
    """Where :attr:`start_values` came from (a run, a weights file), or ''."""

    @property
    def eval_size(self) -> int:
        """The number of evaluation weights (the weights before the search's)."""
        return len(self.weights) - len(self.search.weight_names())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(w.name for w in self.weights)

    def space(self, **overrides) -> WeightSpace:
        """The WeightSpace of this engine (overrides: init_low, init_high, integer). A net's
        output layer (an 'nnue' spec read with :data:`NetWeights`) takes values up to
        :data:`NET_MAX_ABS` (its bounds, which the spec checked, keep each within what its
        field holds)."""
        if is_net(self.features) and self.weights:
            overrides.setdefault("max_abs", NET_MAX_ABS)
        return WeightSpace(
            names=self.names,
            lower=tuple(float(w.lower) for w in self.weights),
            upper=tuple(float(w.upper) for w in self.weights),
            reference=tuple(float(w.reference) for w in self.weights),
            fixed=tuple(bool(w.fixed) for w in self.weights),
            **overrides,
        )

    def engine_values(self, weights) -> dict[str, int]:
        """``{option name: engine value}`` for a full weight vector in evotune units."""
        return {w.option_name: int(round(float(v) * w.scale)) for w, v in zip(self.weights, weights)}


NetWeights = Callable[[str], Sequence[tuple[str, float, float, float, float, float]]]
"""Reads a net file (its absolute path) into its output layer as weights: per weight (name,
reference, lower, upper, least, most), the file's value, the default bounds and the range a bound
may not leave (evotune.players.nets.output_weights). An 'nnue' spec read with one has these
weights (a run tunes them); read without one it has none (it plays its net as it is)."""
