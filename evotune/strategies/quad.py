"""A model-based proposer: pairs played around a centre, the centre moved to the rating model's peak.

Every game of the run feeds one model of strength as a function of the weights, the quadratic
rating model (:mod:`evotune.match.quadmodel`: a slope ``g_i`` and a curvature ``h_i`` per weight,
in units of each weight's fine-tuning scale ``s_i``, anchored at the start), which the run loop
fits after each generation over every stored game and tells the strategy
(:meth:`Strategy.tell`'s ``model``). A generation plays ``batch`` pairs

    t + c s Delta   against   t - c s Delta        (Delta_i = +-1 per free weight)

from the frozen centre t, each a colour-balanced mini-match of ``games`` games; integer weights
are rounded stochastically with one draw for both sides (SPSA's 'shared' rounding, so the + side
is never below the - side). Then the centre moves to where the model expects the most gain:

    u*_i = g_i / max(h_i, min_curvature),  clipped to [-radius, radius];   t = start + s u*

so the proposal is the model's peak within a trust region around the start. The recommendation
is the centre: the model's best estimate, not the last pair's winner. With few games the prior
(slopes of mean 0) keeps the centre at the start; the evidence of every game moves it, whichever
pair played it, and a game is never forgotten, where SPSA applies each pair once with a gain
that decays.

A fine-tuner: the start is the reference (a run from earlier weights), the steps are in
fine-tuning units. The model is separable (no cross terms: CLOP's regression without them); a
landscape whose weights interact strongly is fitted by its separable part only. Measured in
docs/results/selection-simulated.md (a separable landscape: the model's own form, so the
simulator flatters it) and in real games in docs/results/finetune-study.md.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..space import finetune_scale
from .base import MatchOutcome, MatchRequest, Param, Strategy, as_tuple
from .ratingrequest import ModelRequest


class Quad(Strategy):
    """Pairs around a centre; the centre is the quadratic rating model's peak over every game."""

    name = "quad"
    TITLE = "quadratic model"
    ABOUT = "pairs around a quadratic rating model's peak"
    RECOMMENDS = "the centre: the rating model's peak over every game"
    CENTRE = "theta"
    STEP = ("c", "distance")
    GAUNTLET = False  # the model reads its pairs' games, each side against the other
    PARAMS = {
        "batch": Param(16, "int", low=1, high=10_000,
                       doc="pairs played around the centre per generation"),
        "games": Param(2, "int", low=2, even=True,
                       doc="games per pair (even: colour-balanced)"),
        "c": Param(2.0, "float", low=0.0, high=100.0, low_open=True,
                   doc="perturbation of each weight, in fine-tuning units (|v| / 10)"),
        "radius": Param(4.0, "float", low=0.0, high=1000.0, low_open=True,
                        doc="how far the centre may move from the start, fine-tuning units"),
        "prior": Param(1.0, "float", low=0.0, high=1000.0, low_open=True,
                       doc="the model's prior of each slope: standard deviation, Elo per unit"),
        "curvature": Param(0.5, "float", low=0.0, high=1000.0, low_open=True,
                           doc="the model's prior of each curvature: mean, Elo per unit^2"),
        "curvature_sd": Param(1.0, "float", low=0.0, high=1000.0, low_open=True,
                              doc="the model's prior of each curvature: standard deviation"),
        "min_curvature": Param(0.1, "float", low=0.0, high=1000.0, low_open=True,
                               doc="the least curvature the peak is computed with (a flat or "
                                   "convex fit moves the centre to the trust region's edge "
                                   "along its slope)"),
        "init": Param("reference", "choice", choices=("reference", "sample"),
                      doc="start: the reference (a fine-tuning) or a uniform draw like DE's"),
    }

    def _initialize(self) -> None:
        space = self.space
        if self.params["init"] == "sample":
            self.x0 = space.sample(self.rng, 1)[0]
        else:
            self.x0 = space.reference_array.copy()
        self._setup_units()
        self.centre = self.x0.copy()
        self.population = self._rounded()

    def _setup_units(self) -> None:
        space = self.space
        scale = finetune_scale(space.reference_array, space.lower_array, space.upper_array)
        self.scale = np.where(scale > 0, scale, 1.0)
        self.integer = bool(space.integer)

    def rating_model(self) -> ModelRequest:
        p = self.params
        return ModelRequest(form="quadratic", prior=float(p["prior"]),
                            anchor=tuple(float(x) for x in self.x0),
                            curvature=float(p["curvature"]),
                            curvature_sd=float(p["curvature_sd"]))

    def _rounded(self) -> np.ndarray:
        return self.space.round(np.clip(self.centre, self.space.lower_array,
                                        self.space.upper_array))[None, :]

    def _vectors(self) -> np.ndarray:
        return self.centre[None, :]

    def recommended(self, rule: str = "mean") -> np.ndarray:
        """The centre, rounded (one vector: every rule gives it)."""
        super().recommended(rule)  # checks the rule
        return self._rounded()[0]

    def _plan(self) -> tuple[list[MatchRequest], dict]:
        f, space = self._free, self.space
        lower, upper = space.lower_array, space.upper_array
        deltas = self.rng.integers(0, 2, size=(self.params["batch"], f.size)) * 2 - 1
        step = self.params["c"] * self.scale[f] * deltas
        shared = self.rng.random(step.shape)  # one rounding draw for both sides
        sides = []
        for sign in (1.0, -1.0):
            x = np.tile(self._rounded()[0], (len(deltas), 1))
            v = np.clip(self.centre[f] + sign * step, lower[f], upper[f])
            x[:, f] = np.clip(np.floor(v + shared), lower[f], upper[f]) if self.integer else v
            sides.append(x)
        requests = [MatchRequest(a=as_tuple(a), b=as_tuple(b), games=self.params["games"],
                                 tag=(j,)) for j, (a, b) in enumerate(zip(*sides))]
        return requests, {}

    def peak(self, slope: np.ndarray, curvature: np.ndarray) -> np.ndarray:
        """The centre the model's slopes and curvatures (per weight, Elo per unit and unit^2)
        expect the most of: the peak of each weight's parabola within the trust region."""
        p = self.params
        u = np.clip(slope / np.maximum(curvature, p["min_curvature"]), -p["radius"], p["radius"])
        x = self.x0.copy()
        f = self._free
        x[f] = np.clip(self.x0[f] + u[f] * self.scale[f], self.space.lower_array[f],
                       self.space.upper_array[f])
        return x

    def _update(self, requests: list[MatchRequest], plan: dict,
                outcomes: list[MatchOutcome]) -> dict:
        model = self.model
        if model is None:
            raise ValueError("strategy 'quad' proposes by the rating model over every game; "
                             "tell() needs it (model=, the run loop hands it over)")
        if len(model.slope) != self.space.size or not np.allclose(model.scale, self.scale):
            raise ValueError("strategy 'quad': the model told is not of this run's weights "
                             "and units")
        before = self.centre.copy()
        self.centre = self.peak(np.asarray(model.slope), np.asarray(model.curvature))
        self.population = self._rounded()
        f = self._free
        w_minus_l = sum((o.points_a - o.points_b) // 2 for o in outcomes)
        return {"c": float(self.params["c"]), "w_minus_l": int(w_minus_l),
                "model_games": int(model.games),
                "distance": float(np.linalg.norm((self.centre[f] - self.x0[f]) / self.scale[f])),
                "step": float(np.linalg.norm(self.centre - before))}

    def _extra_state(self) -> dict:
        return {"x0": self.x0.tolist(), "centre": self.centre.tolist()}

    def _load_extra_state(self, state: dict) -> None:
        self._setup_units()
        x0 = np.array(state["x0"], dtype=np.float64)
        centre = np.array(state["centre"], dtype=np.float64)
        if x0.shape != (self.space.size,) or centre.shape != (self.space.size,):
            raise ConfigError(f"strategy '{self.name}': saved start or centre does not match "
                              f"the weight space of {self.space.size} weights")
        self.x0, self.centre = x0, centre
        self.population = self._rounded()
