"""A Texel fit as a run under ``populations/<run-id>/`` (through :class:`evotune.store.Store`).

The run looks like an evolutionary run with a population of one, so ``status``, ``plot``,
``report``, ``verify`` and ``export`` work on it unchanged:

- manifest: a RunConfig with ``strategy = "texel"`` whose params are the :class:`TexelConfig`
  settings, the data files' names, sizes and SHA-256 included (``params.data_files``), and the
  identity: hashes of the config, the engine spec, the initial weights file and the data files;
- ``gen-0000``: the initial weights and their error (K already fitted); ``gen-E``: the weights
  after epoch E, with ``loss_train``, ``loss_val`` and ``K`` as statistics;
- ``state.json``: the last epoch, K, the weights and the optimizer's state (Adam's moments);
  a killed fit resumed with ``evotune resume RUN`` equals an uninterrupted one;
- ``texel.json``: the summary (positions used and rejected, K, errors before and after rounding
  to whole engine units).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..enginespec import load_engine_spec, resolve_engine_spec_path
from ..errors import ConfigError, StoreError
from ..fileio import check_writable
from ..limits import LIMITS, Limits
from ..match.fixtures import limits_record
from ..runs.config import RunConfig
from ..runs.lifecycle import resolve_workers
from ..runs.records import Generation, State, check_run_id
from ..runs.store import Store
from ..seeding import STREAM_TEXEL, generator
from ..weightsio import load_weights_file
from . import texel as tx
from .features import Extracted, extract, feature_set
from .labels import Positions, file_record, read_positions

log = logging.getLogger(__name__)

STRATEGY = "texel"


@dataclass(frozen=True)
class TexelConfig:
    """Everything that defines a Texel fit (stored as the run's config)."""

    data: tuple[str, ...]
    """Files of labelled positions."""
    engine: str = "shannon"
    """Engine spec whose weights (feature set, bounds, fixed weights) are fitted."""
    init: str = "reference"
    """Initial weights: 'reference' (the spec's reference values) or a weights JSON file."""
    max_positions: int = 0
    """Read at most this many positions (0 = all)."""
    k: str = "auto"
    """'auto' (fit K with the initial weights) or a fixed value."""
    epochs: int = 30
    """Epochs at most (the fit stops earlier when an epoch improves the error by < tol)."""
    optimizer: str = "lbfgs"
    """'lbfgs' (scipy L-BFGS-B) or 'adam' (full batch)."""
    iters: int = 20
    """Optimizer iterations per epoch."""
    lr: float = 2.0
    """Adam step size in engine units."""
    tol: float = 1e-10
    """Stop when an epoch changes the training error by less than this."""
    qsearch: bool = False
    """Fit on each position's quiescence leaf instead of rejecting non-quiet positions."""
    val_share: float = 0.1
    """Share of positions held out for validation."""
    val_block: int = 64
    """The validation share is drawn in blocks of this many consecutive positions: datagen
    writes a game's positions together, so the positions of one game (which share its result)
    rarely fall on both sides and overfitting shows in the validation error. 1 = position by
    position (fits stored before this setting existed)."""
    max_bad: int = 0
    """Malformed lines tolerated in the data files."""
    seed: int = 1
    """Seed of the validation split."""
    l2: float | str = "auto"
    """Ridge strength toward the initial weights (0 = none; see :class:`texel.Problem`), or
    'auto': the value of :data:`texel.L2_GRID` whose fit has the lowest validation error."""
    # what the report, plot and verify commands read from any run's config
    strategy: str = STRATEGY
    """Always 'texel' (tells the commands what kind of run this is)."""
    np: int = 1
    """A fit is a 'population' of one weight vector."""
    generations: int = 0
    """Mirrors epochs (the generation axis of plots)."""
    limits: Limits = Limits()
    """Limits of 'evotune verify' matches (depth, nodes, ply cap)."""
    openings: str = "2moves"
    """Openings a run 'tuned on' (verification uses the held-out 8moves_v3 suite)."""

    NON_IDENTITY = ("epochs", "generations")

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", tuple(str(d) for d in self.data))
        object.__setattr__(self, "generations", int(self.epochs))
        if not self.data:
            raise ConfigError("texel: give at least one data file of labelled positions")
        if self.optimizer not in tx.OPTIMIZERS:
            raise ConfigError(f"--optimizer {self.optimizer}: use one of "
                              f"{', '.join(tx.OPTIMIZERS)}")
        if self.epochs < 1 or self.iters < 1:
            raise ConfigError("--epochs and --iters must be >= 1")
        if self.max_positions < 0 or self.max_bad < 0:
            raise ConfigError("--max-positions and --max-bad must be >= 0")
        if self.val_block < 1:
            raise ConfigError(f"--val-block {self.val_block}: give a number of positions >= 1")
        if not 0.0 <= self.val_share < 1.0:
            raise ConfigError(f"--val-share {self.val_share:g}: give a share in [0, 1)")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError(f"--lr must be a finite number > 0, got {self.lr!r}")
        if not (self.tol >= 0 and math.isfinite(self.tol)):
            raise ConfigError(f"--tol must be a finite number >= 0, got {self.tol!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed <= LIMITS["seed"]:
            raise ConfigError(f"--seed {self.seed!r} is out of range; give an integer from 0 to "
                              f"{LIMITS['seed']}")
        if self.k != "auto":
            try:
                k = float(self.k)
            except ValueError:
                k = float("nan")
            if not k > 0 or not np.isfinite(k):
                raise ConfigError(f"--k {self.k}: give 'auto' or a positive number")
        if self.l2 == "auto":
            if self.val_share == 0:
                raise ConfigError("--l2 auto chooses the ridge by validation error and "
                                  "--val-share 0 holds out no positions; give --l2 (0 = no "
                                  "ridge) or a --val-share > 0")
        else:
            try:
                l2 = float(self.l2)
            except (TypeError, ValueError):
                l2 = float("nan")
            if isinstance(self.l2, bool) or not (l2 >= 0 and math.isfinite(l2)):
                raise ConfigError(f"--l2 {self.l2}: give 'auto' or a number >= 0 (0 = no ridge)")
            object.__setattr__(self, "l2", l2)

    def to_dict(self) -> dict:
        """The stored form: every field, the limits as their ``depth``, ``nodes`` and
        ``max_plies`` keys (the form fits were stored in before limits were one record)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "limits"}
        d["data"] = list(self.data)
        d.update(limits_record(self.limits))
        return d

    def to_run_config(self, data_files: list[dict]):
        """The RunConfig stored in the manifest: the texel settings are its params."""
        d = self.to_dict()
        params = {k: d.pop(k) for k in _PARAMS}
        params["data_files"] = data_files
        lim = self.limits
        adj = lim.adjudication
        return RunConfig(strategy=STRATEGY, np=1, generations=self.epochs, depth=lim.depth,
                         nodes=lim.nodes, max_plies=lim.max_plies, movetime=lim.movetime,
                         tc=str(lim.tc or ""), time_margin=lim.time_margin,
                         resign_score=adj.resign_score, resign_moves=adj.resign_moves,
                         draw_score=adj.draw_score, draw_moves=adj.draw_moves,
                         draw_start_ply=adj.draw_start_ply, seed=self.seed,
                         engine=self.engine, openings=self.openings,
                         params=tuple(sorted(params.items())))

    @classmethod
    def from_run_config(cls, cfg) -> "TexelConfig":
        params = cfg.params_dict()
        unknown = sorted(set(params) - set(_PARAMS) - {"data_files"})
        if unknown:
            raise StoreError(f"stored texel config has unknown key(s) {unknown}")
        params.setdefault("val_block", 1)  # fits stored before blocks split by position
        return cls(**{k: params[k] for k in _PARAMS if k in params},
                   epochs=cfg.generations, limits=cfg.limits, seed=cfg.seed,
                   engine=cfg.engine, openings=cfg.openings)


_PARAMS = ("data", "init", "max_positions", "k", "optimizer", "iters", "lr", "tol", "qsearch",
           "val_share", "max_bad", "l2", "val_block")


@dataclass(frozen=True)
class FitProgress:
    """An event for the CLI: a stage message or an epoch's errors."""

    kind: str
    """'stage' or 'epoch'."""
    message: str = ""
    epoch: int = 0
    epochs: int = 0
    loss_train: float = 0.0
    loss_val: float = 0.0


def _digest_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def data_files(cfg: TexelConfig) -> list[dict]:
    """Name, size and SHA-256 of every data file."""
    return [{k: r[k] for k in ("name", "size", "sha256")}
            for r in (file_record(Path(p)) for p in cfg.data)]


def fit_identity(cfg: TexelConfig, files: list[dict]) -> dict:
    """Hashes (strings) of the config, engine spec, initial weights file and data files."""
    ident = {k: v for k, v in cfg.to_dict().items() if k not in cfg.NON_IDENTITY}
    ident.pop("data")
    if not ident["l2"]:
        ident.pop("l2")  # fits stored before --l2 existed keep their identity
    if ident["val_block"] == 1:
        ident.pop("val_block")  # ... and before --val-block
    parts = {
        "config": _digest_text(json.dumps(ident, sort_keys=True)),
        "engine_spec": file_record(resolve_engine_spec_path(cfg.engine))["sha256"],
        "openings": "none",
        "init": "reference" if cfg.init == "reference" else file_record(Path(cfg.init))["sha256"],
        "data": _digest_text(json.dumps(files, sort_keys=True)),
    }
    parts["hash"] = _digest_text(json.dumps(parts, sort_keys=True))[:16]
    return parts


def new_fit(cfg: TexelConfig, *, out_dir: str | Path = "populations",
            run_id: str | None = None, workers: int = 0) -> tuple[Store, FitData]:
    """Create the run directory of a new fit; every input (data files included) is read,
    turned into feature rows and checked first, so a bad input (or too few usable positions)
    leaves nothing behind. Returns the store and the data."""
    for p in cfg.data:
        if not Path(p).is_file():
            raise ConfigError(f"data file {p}: no such file")
    if cfg.init != "reference" and not Path(cfg.init).is_file():
        raise ConfigError(f"--init {cfg.init}: give 'reference' or a weights JSON file")
    tx.require_scipy()
    spec = load_engine_spec(cfg.engine)
    feature_set(spec)
    spec.space().require_free("texel")
    _initial_weights(cfg)
    files = data_files(cfg)
    identity = fit_identity(cfg, files)
    run_id = run_id or f"texel-{time.strftime('%Y%m%d-%H%M%S')}-{identity['hash'][:6]}"
    check_run_id(run_id)
    check_writable(out_dir, "runs folder", folder=True)
    if (Path(out_dir) / run_id / "manifest.json").exists():
        raise StoreError(f"run '{run_id}' already exists in {out_dir}; continue it with "
                         f"'evotune resume {run_id}' or choose another --run-id")
    data = fit_data(cfg, workers=workers)
    store = Store.create(out_dir, run_id, config=cfg.to_run_config(files), identity=identity)
    return store, data


def open_fit(store: Store) -> TexelConfig:
    """The config of a stored fit, after checking that its inputs did not change; takes the
    run's writer lock."""
    manifest = store.manifest()
    cfg = TexelConfig.from_run_config(manifest.config)
    store.lock()
    for p in cfg.data + (() if cfg.init == "reference" else (cfg.init,)):
        if not Path(p).is_file():
            what = "data file" if p in cfg.data else "initial weights file"
            raise StoreError(f"fit '{store.run_id}' cannot be resumed: its {what} {p} is "
                             "missing; put it back (same size and SHA-256) and resume again, "
                             "or start a new fit")
    now = fit_identity(cfg, data_files(cfg))
    stored = manifest.identity
    changed = [k for k in ("config", "engine_spec", "init", "data") if stored.get(k) != now.get(k)]
    if changed:
        raise StoreError(f"fit '{store.run_id}' cannot be resumed: its "
                         + ", ".join(changed) + " changed since it started (data files must "
                         "keep their size and SHA-256); restore them or start a new fit")
    return cfg


def is_fit(store: Store) -> bool:
    """True when ``store`` holds a Texel fit."""
    return store.manifest().config.strategy == STRATEGY


def _initial_weights(cfg: TexelConfig) -> np.ndarray:
    spec = load_engine_spec(cfg.engine)
    space = spec.space()
    if cfg.init == "reference":
        w = space.reference_array
    else:
        w = load_weights_file(cfg.init, spec)
    return np.clip(w, space.lower_array, space.upper_array)


def split_indices(n: int, share: float, seed: int, block: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(training, validation) indices: a seeded draw of ``share`` of the blocks of ``block``
    consecutive positions (block 1: of the positions)."""
    if block <= 1:
        perm = generator(seed, STREAM_TEXEL).permutation(n)
        n_val = int(round(share * n))
        return np.sort(perm[n_val:]), np.sort(perm[:n_val])
    perm = generator(seed, STREAM_TEXEL).permutation(-(-n // block))
    order = np.concatenate([np.arange(b * block, min(n, (b + 1) * block)) for b in perm])
    n_val = int(round(share * n))  # the first n_val positions of the drawn blocks
    in_val = np.zeros(n, dtype=bool)
    in_val[order[:n_val]] = True
    idx = np.arange(n)
    return idx[~in_val], idx[in_val]


@dataclass
class FitData:
    """The positions of a fit, read and turned into feature rows, with their split."""

    positions: Positions
    extracted: Extracted
    y: np.ndarray
    """Results of the kept positions."""
    train_idx: np.ndarray
    val_idx: np.ndarray
    seconds_extract: float
    messages: list[str]
    """What reading and extraction found (said when the fit starts)."""


def fit_data(cfg: TexelConfig, *, positions: Positions | None = None,
             workers: int = 0) -> FitData:
    """Read the data files (unless given), extract feature rows and split them; ConfigError
    when the usable positions cannot make a fit (fewer than 2, or a split leaving a side
    empty). Writes nothing."""
    spec = load_engine_spec(cfg.engine)
    w0 = _initial_weights(cfg)
    if positions is None:
        positions = read_positions(cfg.data, max_bad=cfg.max_bad,
                                   max_positions=cfg.max_positions)
    messages = [f"read {len(positions)} positions from {len(cfg.data)} file(s)"
                + (f", {positions.bad} bad lines skipped" if positions.bad else "")]
    t0 = time.perf_counter()
    ex = extract(positions.fens, w0, features=feature_set(spec), use_qsearch=cfg.qsearch,
                 workers=resolve_workers(workers))
    seconds = time.perf_counter() - t0
    messages.append(f"features of {ex.kept.size} positions in {seconds:.1f} s"
                    + (f" ({ex.not_quiet} not quiet, rejected)" if not cfg.qsearch else
                       f" (quiescence leaves; {ex.mate} ending in mate rejected)"))
    n = int(ex.kept.size)
    if n < 2:
        raise ConfigError(f"only {n} usable positions in {', '.join(cfg.data)} ({len(positions)} "
                          f"read, {ex.not_quiet + ex.mate} rejected); a fit needs at least 2: "
                          "give more data")
    train_idx, val_idx = split_indices(n, cfg.val_share, cfg.seed, cfg.val_block)
    if train_idx.size == 0:
        raise ConfigError(f"--val-share {cfg.val_share:g} of {n} usable positions leaves none "
                          "for training; give more data or a smaller share")
    if val_idx.size == 0 and cfg.val_share > 0:
        raise ConfigError(f"--val-share {cfg.val_share:g} of {n} usable positions holds out "
                          "none for validation; give more data or a larger share (--val-share 0 "
                          "fits on every position without validation)")
    return FitData(positions=positions, extracted=ex, y=positions.result_array()[ex.kept],
                   train_idx=train_idx, val_idx=val_idx, seconds_extract=seconds,
                   messages=messages)


def choose_l2(train: tx.Problem, val: tx.Problem, w0: np.ndarray, K: float, cfg: TexelConfig,
              say: Callable[[str], None]) -> tuple[float, list[dict]]:
    """The ridge of :data:`texel.L2_GRID` whose whole fit (from ``w0``, as the fit itself runs)
    has the lowest validation error (the smallest on a tie); says each one's error."""
    start = val.error(w0, K)
    tried = []
    for l2 in tx.L2_GRID:
        problem = dataclasses.replace(train, l2=l2)
        w, n = w0, 0
        for n, w, _, _ in tx.epochs(problem, w0, K, optimizer=cfg.optimizer, iters=cfg.iters,
                                    lr=cfg.lr, tol=cfg.tol, adam=tx.AdamState.zeros(w0.size),
                                    start=0, stop=cfg.epochs, last=problem.error(w0, K)):
            pass
        tried.append({"l2": l2, "validation": val.error(w, K), "epochs": n})
        say(f"ridge --l2 {l2:g}: validation error {tried[-1]['validation']:.6f} after {n} "
            f"epochs (start {start:.6f})")
    best = min(tried, key=lambda t: t["validation"])
    say(f"ridge --l2 {best['l2']:g} chosen: the lowest validation error of {len(tried)} "
        "(give --l2 to set it)")
    return float(best["l2"]), tried


def execute_fit(store: Store, cfg: TexelConfig, *, data: FitData | None = None,
                progress: Callable[[FitProgress], None] | None = None,
                workers: int = 0) -> dict:
    """Run (or continue) the fit stored in ``store``; returns the texel.json summary.

    ``data``: the positions already read and extracted (by :func:`new_fit`); None reads them.
    ``workers``: threads extracting features (0 = one per core); the fit does not depend on it.
    With ``l2 = 'auto'`` a new fit first chooses its ridge (:func:`choose_l2`); the choice is
    part of the stored state, so a resumed fit keeps it."""
    def say(msg: str) -> None:
        log.info(msg)
        if progress is not None:
            progress(FitProgress(kind="stage", message=msg))

    t_start = time.perf_counter()
    store.lock()
    state = store.read_state()
    seconds_before = state.seconds if state else 0.0
    spec = load_engine_spec(cfg.engine)
    space = spec.space()
    w0 = _initial_weights(cfg)
    if data is None:
        data = fit_data(cfg, workers=workers)
    for message in data.messages:
        say(message)
    ex, positions, X, y = data.extracted, data.positions, data.extracted.X, data.y
    bounds = dict(free=space.free, lower=space.lower_array, upper=space.upper_array)
    train = tx.Problem(X[data.train_idx], y[data.train_idx], **bounds, l2=0.0, center=w0)
    val = tx.Problem(X[data.val_idx], y[data.val_idx], **bounds)

    def commit(epoch: int, w: np.ndarray, K: float, seconds: float, *,
               converged: bool) -> tuple[dict, dict]:
        """Store epoch ``epoch`` (generation file, then state: the commit point)."""
        stats = {"loss_train": train.error(w, K), "loss_val": val.error(w, K), "K": K}
        st = {"kind": STRATEGY, "K": K, "weights": w.tolist(), "adam": opt.to_dict(),
              "converged": bool(converged), "loss_train": stats["loss_train"], "l2": train.l2}
        total = seconds_before + time.perf_counter() - t_start
        row = tuple(float(x) for x in w)
        gen = Generation(generation=epoch, strategy=STRATEGY, names=tuple(space.names),
                         population=(row,), mean=row, std=(0.0,) * w.size, games=0,
                         games_total=0, stats=stats, seconds=seconds, seconds_total=total,
                         state=st)
        store.write_generation(gen)
        store.write_state(gen.as_state())
        return stats, st

    opt = tx.AdamState.zeros(w0.size)
    tried: list[dict] = []
    if state is None:
        K = fit_k_value(cfg, train, w0)
        say(f"K = {K:.4f} (error {train.error(w0, K):.6f} train, {val.error(w0, K):.6f} "
            "validation with the initial weights)")
        l2 = cfg.l2 if cfg.l2 != "auto" else None
        if l2 is None:
            l2, tried = choose_l2(train, val, w0, K, cfg, say)
        train.l2 = float(l2)
        stats, st = commit(0, w0, K, 0.0, converged=False)
    else:
        st = state.strategy
        train.l2 = float(st.get("l2", cfg.l2))  # fits stored before the choice was kept
    K = float(st["K"])
    w = np.asarray(st["weights"], dtype=np.float64)
    opt = tx.AdamState.from_dict(st["adam"])
    epoch = state.generation if state is not None else 0
    if not st["converged"]:
        t_ep = time.perf_counter()
        for epoch, w, _, converged in tx.epochs(train, w, K, optimizer=cfg.optimizer,
                                                iters=cfg.iters, lr=cfg.lr, tol=cfg.tol,
                                                adam=opt, start=epoch, stop=cfg.epochs,
                                                last=float(st["loss_train"])):
            stats, st = commit(epoch, w, K, time.perf_counter() - t_ep, converged=converged)
            if progress is not None:
                progress(FitProgress(kind="epoch", epoch=epoch, epochs=cfg.epochs,
                                     loss_train=stats["loss_train"], loss_val=stats["loss_val"]))
            t_ep = time.perf_counter()
    wr = tx.rounded(w, train)
    errors = {"error_initial": {"train": train.error(w0, K), "validation": val.error(w0, K)},
              "error_before_rounding": {"train": train.error(w, K),
                                        "validation": val.error(w, K)},
              "error_after_rounding": {"train": train.error(wr, K),
                                       "validation": val.error(wr, K)}}
    warning = ""
    if val.n and errors["error_after_rounding"]["validation"] > \
            errors["error_initial"]["validation"]:
        warning = (f"the fitted weights' validation error "
                   f"{errors['error_after_rounding']['validation']:.6f} is worse than the start's "
                   f"{errors['error_initial']['validation']:.6f}: they predict held-out games "
                   "worse than the initial weights (overfitting); try a larger --l2 or more data")
    summary = {
        "run_id": store.run_id, "engine": cfg.engine, "names": list(space.names),
        "positions_read": len(positions), "bad_lines": positions.bad,
        "not_quiet": ex.not_quiet, "mate": ex.mate, "train": train.n, "validation": val.n,
        "K": K, "epochs": epoch, "converged": bool(st["converged"]), "l2": train.l2,
        "l2_chosen_by_validation": cfg.l2 == "auto", **({"l2_tried": tried} if tried else {}),
        **errors, "warning": warning,
        "weights": w.tolist(), "weights_rounded": wr.tolist(),
        "seconds_extract": data.seconds_extract,
        "data": store.manifest().config.params_dict()["data_files"],
    }
    store.write_document("texel", summary)
    store.write_state(State(generation=epoch, games=0, finished=True, strategy=st,
                            seconds=seconds_before + time.perf_counter() - t_start))
    store.unlock()
    return summary


def fit_k_value(cfg: TexelConfig, problem: tx.Problem, w0: np.ndarray) -> float:
    """K from the config, or fitted with the initial weights."""
    return tx.fit_k(problem, w0) if cfg.k == "auto" else float(cfg.k)
