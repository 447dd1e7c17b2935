"""The fit kind, one package: Texel fits of evaluation weights to positions (``evotune texel``).
Its config (:mod:`.config`, :class:`TexelConfig`), its plan resolved once (:mod:`.plan`,
:class:`FitPlan`), its solver (:mod:`.solver`: new, open, execute, one stored epoch per step)
and its view and lifecycle glue (:mod:`.kind`, :data:`FIT`). The numerics stay in
:mod:`evotune.learn` (``texel``, ``features``, ``fitdata``)."""
from __future__ import annotations

from .config import TexelConfig
from .kind import FIT, FIT_STORED, FitKind
from .plan import FitPlan, plan_fit
from .solver import execute_fit, new_fit, open_fit, read_data

__all__ = ["FIT", "FIT_STORED", "FitKind", "FitPlan", "TexelConfig", "execute_fit", "new_fit",
           "open_fit", "plan_fit", "read_data"]
