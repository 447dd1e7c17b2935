"""jDE: self-adaptive DE/rand/1/bin (Brest, Greiner, Boskovic, Mernik, Zumer 2006).

Each individual carries its own F and CR (initially ``F`` and ``CR``). Before each trial,
F_i' = F_low + F_range * rand with probability tau1 (else F_i), and CR_i' = rand with probability
tau2 (else CR_i); the trial is built with F_i', CR_i' by DE's own mutation and crossover, and the
new F_i', CR_i' survive only when the trial wins its selection match. Everything else (selection,
bound rule, ranking) is :class:`~evotune.strategies.de.DE`'s.
"""
from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .base import Param
from .de import DE


class JDE(DE):
    """Self-adaptive DE: per-individual F and CR that survive only with a winning trial."""

    name = "jde"
    TITLE = "jDE"
    ABOUT = "self-adaptive DE"
    PARAMS = {
        **DE.PARAMS,
        "F": Param(0.5, "float", low=0.0, high=2.0, low_open=True, doc="initial F of everyone"),
        "CR": Param(0.9, "float", low=0.0, high=1.0, doc="initial CR of everyone"),
        "tau1": Param(0.1, "float", low=0.0, high=1.0, doc="probability of a new F"),
        "tau2": Param(0.1, "float", low=0.0, high=1.0, doc="probability of a new CR"),
        "F_low": Param(0.1, "float", low=0.0, high=2.0, low_open=True,
                       doc="smallest new F (Brest's F_l)"),
        "F_range": Param(0.9, "float", low=0.0, high=2.0, doc="new F = F_low + F_range * rand"),
    }

    def _initialize(self) -> None:
        super()._initialize()
        size = len(self.population)
        self.F = np.full(size, self.params["F"], dtype=np.float64)
        self.CR = np.full(size, self.params["CR"], dtype=np.float64)

    def _controls(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.params
        size = len(self.population)
        u = self.rng.random((size, 4))
        F = np.where(u[:, 1] < p["tau1"], p["F_low"] + p["F_range"] * u[:, 0], self.F)
        CR = np.where(u[:, 3] < p["tau2"], u[:, 2], self.CR)
        return F, CR

    def _on_replace(self, i: int, plan: dict) -> None:
        self.F[i] = plan["F"][i]
        self.CR[i] = plan["CR"][i]

    def _control_stats(self, plan: dict) -> dict:
        return {"F_mean": float(self.F.mean()), "CR_mean": float(self.CR.mean()),
                "F_std": float(self.F.std()), "CR_std": float(self.CR.std())}

    def _extra_state(self) -> dict:
        return {**super()._extra_state(), "F": self.F.tolist(), "CR": self.CR.tolist()}

    def _load_extra_state(self, state: dict) -> None:
        super()._load_extra_state(state)
        self.F = np.array(state["F"], dtype=np.float64)
        self.CR = np.array(state["CR"], dtype=np.float64)
        if self.F.shape != (len(self.population),) or self.CR.shape != self.F.shape:
            raise ConfigError(f"strategy '{self.name}': saved F/CR do not match the population")
