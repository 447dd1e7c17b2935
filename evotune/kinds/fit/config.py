"""The settings of a Texel fit (:class:`TexelConfig`): what ``evotune texel`` fits, on which data,
and how; validated when made. A fit is a run of its own kind (``kind = "fit"`` in its manifest,
:mod:`evotune.kinds.fit.solver` runs it); its manifest stores this record and the data files it
read (:class:`~evotune.datafiles.DataFile`).

Store format 1 kept a fit as a RunConfig with ``strategy = "texel"`` and these settings as its
params; :func:`texel_config_from_v1` reads such a manifest exactly or refuses it.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

from ...datafiles import DataFile, data_files_from_list
from ...errors import ConfigError
from ...learn.fitsettings import FitOptimiser, FitPositions, FitRidge, FitValidation
from ...limits import LIMITS, Limits
from ...match.fixtures import limits_record
from ...rules import Adjudication
from ..games.config import RunConfig
from ..games.settings import PlaySettings

STRATEGY = "texel"
"""What a fit's generation files and ``evotune status`` name as its strategy."""
OPTIMIZERS = ("lbfgs", "adam")
"""scipy's L-BFGS-B and full-batch Adam (:func:`evotune.learn.texel.epochs`)."""
L2_RULES = ("one-se", "lowest")
"""How ``--l2 auto`` chooses the ridge (:func:`evotune.learn.fitdata.choose_l2`): ``one-se``,
the strongest ridge of :data:`evotune.learn.texel.L2_GRID_ONE_SE` whose validation error is
within one standard error of the lowest (the default); ``lowest``, the ridge of
:data:`evotune.learn.texel.L2_GRID` with the lowest validation error (fits stored before the rule
existed)."""
BOOK_PLIES = 8
"""Plies of a Polyglot book opening in the matches that verify a fit (the match default)."""


FIT_SETTINGS: dict[str, tuple[str, str]] = {
    "max_positions": ("positions", "max_positions"), "max_bad": ("positions", "max_bad"),
    "qsearch": ("positions", "qsearch"), "optimizer": ("optimiser", "name"),
    "epochs": ("optimiser", "epochs"), "iters": ("optimiser", "iters"),
    "lr": ("optimiser", "lr"), "tol": ("optimiser", "tol"),
    "val_share": ("validation", "share"), "val_block": ("validation", "block"),
    "l2": ("ridge", "l2"), "l2_rule": ("ridge", "rule"),
}
"""Each grouped setting's flat name (its flag's and its stored key's) and where it is:
(TexelConfig's record, the record's field)."""
STORED_ORDER = ("data", "engine", "init", "max_positions", "k", "epochs", "optimizer", "iters",
                "lr", "tol", "qsearch", "val_share", "val_block", "max_bad", "seed", "l2",
                "l2_rule", "openings")
"""The stored keys of a fit's settings (its limits aside), in the order fits have stored them."""


@dataclass(frozen=True)
class TexelConfig:
    """Everything that defines a Texel fit (stored as the run's config): its data, engine,
    initial weights, K and seed as its own fields, the rest grouped in value records (which
    positions, the optimiser, the validation split, the ridge) and the limits and openings of
    its verification. Its stored form is flat (:data:`STORED_ORDER`), as fits have always
    stored it; :meth:`of` makes one from the flat names."""

    kind: ClassVar[str] = "fit"
    """The run kind a manifest names (games runs: 'games')."""

    data: tuple[str, ...]
    """Files of labelled positions."""
    engine: str = "shannon"
    """Engine spec whose weights (feature set, bounds, fixed weights) are fitted."""
    init: str = "reference"
    """Initial weights: 'reference' (the spec's reference values) or a weights JSON file."""
    k: str = "auto"
    """'auto' (fit K with the initial weights) or a fixed value."""
    seed: int = 1
    """Seed of the validation split."""
    positions: FitPositions = FitPositions()
    """Which positions it reads and fits."""
    optimiser: FitOptimiser = FitOptimiser()
    """How the loss is minimised, and for how many epochs."""
    validation: FitValidation = FitValidation()
    """The held-out positions."""
    ridge: FitRidge = FitRidge()
    """The ridge toward the initial weights."""
    limits: Limits = Limits()
    """Limits of the matches that verify the fitted weights (``evotune verify``)."""
    openings: str = "2moves"
    """Openings a fit counts as 'tuned on' (verification plays the held-out 8moves_v3 suite)."""

    @classmethod
    def of(cls, **flat) -> TexelConfig:
        """A config from the flat names (the flags' and the stored keys': ``epochs``, ``l2``,
        ``val_share``, ...; :data:`FIT_SETTINGS`), each put in its record."""
        groups: dict[str, dict] = {}
        own = {}
        for name, value in flat.items():
            if name in FIT_SETTINGS:
                group, field = FIT_SETTINGS[name]
                groups.setdefault(group, {})[field] = value
            else:
                own[name] = value
        records = {"positions": FitPositions, "optimiser": FitOptimiser,
                   "validation": FitValidation, "ridge": FitRidge}
        return cls(**own, **{g: records[g](**v) for g, v in groups.items()})

    def flat(self) -> dict:
        """Every setting by its flat name, in :data:`STORED_ORDER` (the limits aside)."""
        values = {name: getattr(getattr(self, group), field)
                  for name, (group, field) in FIT_SETTINGS.items()}
        values.update({n: getattr(self, n) for n in ("data", "engine", "init", "k", "seed",
                                                     "openings")})
        return {n: values[n] for n in STORED_ORDER}

    @property
    def epochs(self) -> int:
        """The epoch limit (:attr:`FitOptimiser.epochs`)."""
        return self.optimiser.epochs

    def with_epochs(self, epochs: int) -> TexelConfig:
        """This config with another epoch limit (a resume's raise)."""
        return dataclasses.replace(self, optimiser=dataclasses.replace(self.optimiser,
                                                                       epochs=epochs))

    NON_IDENTITY: ClassVar[tuple[str, ...]] = ("epochs",)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", tuple(str(d) for d in self.data))
        if not self.data:
            raise ConfigError("texel: give at least one data file of labelled positions")
        if self.optimiser.name not in OPTIMIZERS:
            raise ConfigError(f"--optimizer {self.optimiser.name}: use one of "
                              f"{', '.join(OPTIMIZERS)}")
        if self.optimiser.epochs < 1 or self.optimiser.iters < 1:
            raise ConfigError("--epochs and --iters must be >= 1")
        if self.positions.max_positions < 0 or self.positions.max_bad < 0:
            raise ConfigError("--max-positions and --max-bad must be >= 0")
        if self.validation.block < 1:
            raise ConfigError(f"--val-block {self.validation.block}: give a number of positions >= 1")
        if not 0.0 <= self.validation.share < 1.0:
            raise ConfigError(f"--val-share {self.validation.share:g}: give a share in [0, 1)")
        if not (self.optimiser.lr > 0 and math.isfinite(self.optimiser.lr)):
            raise ConfigError(f"--lr must be a finite number > 0, got {self.optimiser.lr!r}")
        if not (self.optimiser.tol >= 0 and math.isfinite(self.optimiser.tol)):
            raise ConfigError(f"--tol must be a finite number >= 0, got {self.optimiser.tol!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed <= LIMITS["seed"]:
            raise ConfigError(f"--seed {self.seed!r} is out of range; give an integer from 0 to "
                              f"{LIMITS['seed']}")
        if self.k != "auto":
            try:
                k = float(self.k)
            except ValueError:
                k = float("nan")
            if not k > 0 or not math.isfinite(k):
                raise ConfigError(f"--k {self.k}: give 'auto' or a positive number")
        if self.ridge.rule not in L2_RULES:
            raise ConfigError(f"--l2-rule {self.ridge.rule}: use one of {', '.join(L2_RULES)}")
        if self.ridge.l2 == "auto":
            if self.validation.share == 0:
                raise ConfigError("--l2 auto chooses the ridge by validation error and "
                                  "--val-share 0 holds out no positions; give --l2 (0 = no "
                                  "ridge) or a --val-share > 0")
        else:
            try:
                l2 = float(self.ridge.l2)
            except (TypeError, ValueError):
                l2 = float("nan")
            if isinstance(self.ridge.l2, bool) or not (l2 >= 0 and math.isfinite(l2)):
                raise ConfigError(f"--l2 {self.ridge.l2}: give 'auto' or a number >= 0 (0 = no ridge)")
            object.__setattr__(self, "ridge", dataclasses.replace(self.ridge, l2=l2))

    # -- what the readers of any run take from its config (every kind's) ------------------------
    @property
    def method(self) -> str:
        """'texel' (the name status and the generation files give the fit)."""
        return STRATEGY

    @property
    def steps(self) -> int:
        """The epochs: a fit stores epoch E as generation E."""
        return self.epochs

    max_games: ClassVar[int] = 0
    """A fit plays no games to tune (its verification's are not a budget)."""
    keeps_population: ClassVar[bool] = False
    """A fit's steps hold one vector, its weights."""
    vector_name: ClassVar[str] = "the fitted weights"
    """What its one vector is called."""
    starts_from_given: ClassVar[bool] = False
    """Its verification plays the spec's own values as 'reference', not as a start."""

    def params_dict(self) -> dict:
        """A fit has no strategy parameters."""
        return {}

    @property
    def play(self) -> PlaySettings:
        """How the fitted weights play their verification matches (what the readers of any
        run's weights read, :class:`~evotune.runs.registry.WeightsConfig`): the fit's limits and
        openings, :data:`BOOK_PLIES` book plies."""
        return PlaySettings(limits=self.limits, openings=self.openings, book_plies=BOOK_PLIES)

    @property
    def tc(self) -> str:
        """The verification limits' time control as text ('' = none)."""
        return str(self.limits.tc or "")

    def summary_items(self) -> list[tuple[str, str]]:
        """(label, value) lines that describe the fit (the report's configuration)."""
        return [("kind", "Texel fit"), ("data", ", ".join(self.data)), ("engine", self.engine),
                ("initial weights", self.init),
                ("optimizer", f"{self.optimiser.name}, {self.optimiser.iters} iterations per epoch"),
                ("epoch limit", str(self.optimiser.epochs)), ("K", self.k),
                ("ridge (l2)", f"{self.ridge.l2:g}" if self.ridge.l2 != "auto" else
                 f"auto ({L2_RULE_TEXT[self.ridge.rule]})"),
                ("validation", f"{self.validation.share:g} of the positions in blocks of "
                               f"{self.validation.block}"),
                ("positions", "quiescence leaves" if self.positions.qsearch else "quiet positions only"),
                ("seed", str(self.seed))]

    # -- stored forms -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The stored form (the manifest's ``config``): every setting, the limits as their
        ``depth``, ``nodes`` and ``max_plies`` keys (:func:`limits_record`)."""
        d = self.flat()
        d["data"] = list(self.data)
        d.update(limits_record(self.limits))
        return d

    def identity_dict(self) -> dict:
        """The settings the identity hashes, in the form fits have hashed them since they were
        first stored (with the 'strategy' and 'np' a fit's config held then); ``l2 = 0``,
        ``val_block = 1`` and ``l2_rule = 'lowest'`` are left out, so fits stored before those
        settings keep their identity."""
        d = {k: v for k, v in self.to_dict().items() if k not in self.NON_IDENTITY + ("data",)}
        d.update(strategy=STRATEGY, np=1)
        if not d["l2"]:
            del d["l2"]
        if d["l2_rule"] == "lowest":
            del d["l2_rule"]
        if d["val_block"] == 1:
            del d["val_block"]
        return d


_STORED_TYPES: dict[str, tuple[type, ...]] = {
    "engine": (str,), "init": (str,), "k": (str,), "optimizer": (str,), "openings": (str,),
    "max_positions": (int,), "epochs": (int,), "iters": (int,), "val_block": (int,),
    "max_bad": (int,), "seed": (int,), "depth": (int,), "nodes": (int,), "max_plies": (int,),
    "lr": (int, float), "tol": (int, float), "val_share": (int, float), "l2": (int, float, str),
    "movetime": (int, float), "time_margin": (int, float), "tc": (str,), "qsearch": (bool,),
    "l2_rule": (str,),
}
_LATER_SETTINGS = {"l2_rule": "lowest"}
"""Settings added after fits were first stored, with the value a stored config without them
means (what those fits did)."""
L2_RULE_TEXT = {"one-se": "the strongest ridge within one standard error of the lowest "
                          "validation error",
                "lowest": "the lowest validation error"}
"""The report's words for each rule of choosing the ridge."""
_LIMIT_KEYS = ("depth", "nodes", "max_plies")
_OPTIONAL_LIMIT_KEYS = ("movetime", "tc", "time_margin", "adjudication")


def _limits_from_record(d: dict) -> Limits:
    """The inverse of :func:`limits_record`."""
    adj = d.get("adjudication")
    if adj is not None and not (isinstance(adj, list) and len(adj) == 5):
        raise ConfigError("'adjudication' must be a list of 5 integers")
    default = Limits()
    return Limits(depth=d["depth"], nodes=d["nodes"], max_plies=d["max_plies"],
                  movetime=d.get("movetime", default.movetime), tc=d.get("tc"),
                  time_margin=d.get("time_margin", default.time_margin),
                  adjudication=Adjudication(*adj) if adj is not None else default.adjudication)


def texel_config_from_dict(d: dict) -> TexelConfig:
    """The one validator of a stored TexelConfig (:meth:`TexelConfig.to_dict`'s form): every
    key present with its type, no unknown key, the values valid (ConfigError naming the key)."""
    settings = list(STORED_ORDER)
    d = {**_LATER_SETTINGS, **d}
    required = set(settings) | set(_LIMIT_KEYS)
    missing = sorted(required - set(d))
    unknown = sorted(set(d) - required - set(_OPTIONAL_LIMIT_KEYS))
    if missing or unknown:
        raise ConfigError("stored texel config: " + "; ".join(
            part for part in (f"missing {missing}" if missing else "",
                              f"unknown key(s) {unknown}" if unknown else "") if part))
    data = d["data"]
    if not isinstance(data, list) or not all(isinstance(p, str) for p in data):
        raise ConfigError("'data' must be a list of file names")
    for key, types in _STORED_TYPES.items():
        if key in d and (not isinstance(d[key], types)
                         or (bool not in types and isinstance(d[key], bool))):
            raise ConfigError(f"'{key}' must be {' or '.join(t.__name__ for t in types)}, "
                              f"not {d[key]!r}")
    values = {k: d[k] for k in settings}
    return TexelConfig.of(**{**values, "data": tuple(data)}, limits=_limits_from_record(d))


# ---- store format 1 -------------------------------------------------------------------------------

_V1_PARAMS = ("data", "init", "max_positions", "k", "optimizer", "iters", "lr", "tol", "qsearch",
              "val_share", "max_bad", "l2", "val_block")
"""The fit settings format 1 kept in the RunConfig's params (besides ``data_files``)."""


def is_v1_fit(config: dict) -> bool:
    """True when a format-1 manifest's config is a fit's (a RunConfig named 'texel')."""
    return config.get("strategy") == STRATEGY


V1_ABSENT = ("guard_games", "guard_openings")  # the final check's stored keys (its old name)
"""RunConfig's stored keys added after store format 1 (a format-1 fit's config never has them)."""


def _v1_config(cfg: TexelConfig, files: tuple[DataFile, ...]) -> dict:
    """The manifest config format 1 stored for ``cfg``: RunConfig's fields (the fit's epochs as
    its generations, its limits, seed, engine and openings; every other field at its default)
    with the fit's settings and data files as params."""
    stored = cfg.to_dict()
    params: dict = {k: stored[k] for k in _V1_PARAMS}
    params["data_files"] = [f.to_json() for f in files]
    lim, adj = cfg.limits, cfg.limits.adjudication
    base = {k: v for k, v in RunConfig().to_dict().items() if k not in V1_ABSENT}
    base.update(strategy=STRATEGY, np=1, generations=cfg.epochs, depth=lim.depth,
                nodes=lim.nodes, max_plies=lim.max_plies, movetime=lim.movetime, tc=cfg.tc,
                time_margin=lim.time_margin, resign_score=adj.resign_score,
                resign_moves=adj.resign_moves, draw_score=adj.draw_score,
                draw_moves=adj.draw_moves, draw_start_ply=adj.draw_start_ply, seed=cfg.seed,
                engine=cfg.engine, openings=cfg.openings, params=params)
    return base


def texel_config_from_v1(config: dict) -> tuple[TexelConfig, tuple[DataFile, ...]]:
    """A format-1 fit's config (a RunConfig's fields, the fit's settings as params) as a
    TexelConfig and its data files; exact or refused: written back in format 1 the result must
    give the stored config key for key (ConfigError naming the keys that differ).

    Fits stored before ``--l2`` ran without a ridge (l2 0), before ``--val-block`` split their
    validation position by position (val_block 1); fields RunConfig gained later read as their
    defaults, as run_config_from_dict reads them."""
    params = config.get("params")
    if not isinstance(params, dict):
        raise ConfigError("'params' must be an object")
    params = {"l2": 0.0, "val_block": 1, **params}
    unknown = sorted(set(params) - set(_V1_PARAMS) - {"data_files"})
    missing = sorted(set(_V1_PARAMS) - set(params))
    if unknown or missing:
        raise ConfigError(f"stored texel config: unknown key(s) {unknown}, missing {missing}")
    files = data_files_from_list(params.get("data_files"))
    default = RunConfig().to_dict()
    later = {k: default[k] for k in RunConfig.LATER_FIELDS}
    stored = {**later, **config, "params": params}
    try:
        limits = Limits(depth=stored["depth"], nodes=stored["nodes"],
                        max_plies=stored["max_plies"], movetime=stored["movetime"],
                        tc=stored["tc"], time_margin=stored["time_margin"],
                        adjudication=Adjudication(*(stored[k] for k in (
                            "resign_score", "resign_moves", "draw_score", "draw_moves",
                            "draw_start_ply"))))
        data = params["data"]
        if not isinstance(data, list):
            raise ConfigError("'data' must be a list of file names")
        cfg = TexelConfig.of(**{k: params[k] for k in _V1_PARAMS if k != "data"},
                             l2_rule=_LATER_SETTINGS["l2_rule"], data=tuple(data),
                             epochs=stored["generations"], limits=limits,
                             seed=stored["seed"], engine=stored["engine"],
                             openings=stored["openings"])
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"a format-1 fit config without a valid {exc}") from None
    again = _v1_config(cfg, files)
    differ = sorted(k for k in set(again) | set(stored) if again.get(k) != stored.get(k))
    if differ:
        raise ConfigError(f"a format-1 fit config whose {', '.join(differ)} cannot be read "
                          "exactly as a fit's settings")
    return cfg, files
