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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..enginespec import load_engine_spec, resolve_engine_spec_path
from ..errors import ConfigError, StoreError
from ..limits import Limits
from ..match.fixtures import limits_record
from ..runs.config import RunConfig
from ..runs.lifecycle import resolve_workers
from ..runs.records import Generation, State, check_run_id
from ..runs.store import Store
from ..seeding import STREAM_TEXEL, generator
from ..weightsio import load_weights_file
from . import texel as tx
from .features import extract, feature_set
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
    l2: float = 0.0
    """Ridge strength toward the initial weights (0 = none); see :class:`texel.Problem`."""
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
        if not self.lr > 0:
            raise ConfigError(f"--lr must be > 0, got {self.lr!r}")
        if self.k != "auto":
            try:
                k = float(self.k)
            except ValueError:
                k = float("nan")
            if not k > 0 or not np.isfinite(k):
                raise ConfigError(f"--k {self.k}: give 'auto' or a positive number")
        if not (self.l2 >= 0 and np.isfinite(self.l2)):
            raise ConfigError(f"--l2 {self.l2!r}: give a number >= 0 (0 = no ridge)")

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
            run_id: str | None = None) -> tuple[Store, Positions]:
    """Create the run directory of a new fit; every input (data files included) is read and
    checked first, so a bad input leaves nothing behind. Returns the store and the positions."""
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
    if (Path(out_dir) / run_id / "manifest.json").exists():
        raise StoreError(f"run '{run_id}' already exists in {out_dir}; continue it with "
                         f"'evotune resume {run_id}' or choose another --run-id")
    positions = read_positions(cfg.data, max_bad=cfg.max_bad, max_positions=cfg.max_positions)
    store = Store.create(out_dir, run_id, config=cfg.to_run_config(files), identity=identity)
    return store, positions


def open_fit(store: Store) -> TexelConfig:
    """The config of a stored fit, after checking that its inputs did not change; takes the
    run's writer lock."""
    manifest = store.manifest()
    cfg = TexelConfig.from_run_config(manifest.config)
    store.lock()
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


def _split(n: int, share: float, seed: int, block: int = 1) -> tuple[np.ndarray, np.ndarray]:
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


def execute_fit(store: Store, cfg: TexelConfig, *, positions: Positions | None = None,
                progress: Callable[[FitProgress], None] | None = None,
                workers: int = 0) -> dict:
    """Run (or continue) the fit stored in ``store``; returns the texel.json summary.

    ``positions``: the data files already read (by :func:`new_fit`); None reads them.
    ``workers``: threads extracting features (0 = one per core); the fit does not depend on it."""
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
    if positions is None:
        positions = read_positions(cfg.data, max_bad=cfg.max_bad,
                                   max_positions=cfg.max_positions)
    say(f"read {len(positions)} positions from {len(cfg.data)} file(s)"
        + (f", {positions.bad} bad lines skipped" if positions.bad else ""))
    t0 = time.perf_counter()
    ex = extract(positions.fens, w0, features=feature_set(spec), use_qsearch=cfg.qsearch,
                 workers=resolve_workers(workers))
    y = positions.result_array()[ex.kept]
    seconds_extract = time.perf_counter() - t0
    say(f"features of {ex.kept.size} positions in {seconds_extract:.1f} s"
        + (f" ({ex.not_quiet} not quiet, rejected)" if not cfg.qsearch else
           f" (quiescence leaves; {ex.mate} ending in mate rejected)"))
    if ex.kept.size < 2:
        raise ConfigError(f"only {ex.kept.size} usable positions; give more data")
    train_idx, val_idx = _split(ex.kept.size, cfg.val_share, cfg.seed, cfg.val_block)
    X = ex.X
    free = space.free
    bounds = dict(free=free, lower=space.lower_array, upper=space.upper_array)
    train = tx.Problem(X[train_idx], y[train_idx], **bounds, l2=cfg.l2, center=w0)
    val = tx.Problem(X[val_idx], y[val_idx], **bounds)

    def commit(epoch: int, w: np.ndarray, K: float, seconds: float, *, converged: bool,
               last: float | None) -> tuple[dict, dict]:
        """Store epoch ``epoch`` (generation file, then state: the commit point)."""
        stats = {"loss_train": train.error(w, K), "loss_val": val.error(w, K), "K": K}
        st = {"kind": STRATEGY, "K": K, "weights": w.tolist(), "adam": opt.to_dict(),
              "converged": bool(converged or (last is not None
                                              and abs(last - stats["loss_train"]) < cfg.tol)),
              "loss_train": stats["loss_train"]}
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
    if state is None:
        K = fit_k_value(cfg, train, w0)
        stats, st = commit(0, w0, K, 0.0, converged=False, last=None)
        say(f"K = {K:.4f} (error {stats['loss_train']:.6f} train, {stats['loss_val']:.6f} "
            "validation with the initial weights)")
    else:
        st = state.strategy
    K = float(st["K"])
    w = np.asarray(st["weights"], dtype=np.float64)
    opt = tx.AdamState.from_dict(st["adam"])
    epoch = state.generation if state is not None else 0
    while epoch < cfg.epochs and not st["converged"]:
        t_ep = time.perf_counter()
        if cfg.optimizer == "lbfgs":
            w = tx.lbfgs_epoch(train, w, K, iters=cfg.iters)
        else:
            w = tx.adam_epoch(train, w, K, opt, iters=cfg.iters, lr=cfg.lr)
        epoch += 1
        stats, st = commit(epoch, w, K, time.perf_counter() - t_ep, converged=False,
                           last=float(st["loss_train"]))
        if progress is not None:
            progress(FitProgress(kind="epoch", epoch=epoch, epochs=cfg.epochs,
                                 loss_train=stats["loss_train"], loss_val=stats["loss_val"]))
    wr = tx.rounded(w, train)
    summary = {
        "run_id": store.run_id, "engine": cfg.engine, "names": list(space.names),
        "positions_read": len(positions), "bad_lines": positions.bad,
        "not_quiet": ex.not_quiet, "mate": ex.mate, "train": train.n, "validation": val.n,
        "K": K, "epochs": epoch, "converged": bool(st["converged"]),
        "error_initial": {"train": train.error(w0, K), "validation": val.error(w0, K)},
        "error_before_rounding": {"train": train.error(w, K), "validation": val.error(w, K)},
        "error_after_rounding": {"train": train.error(wr, K), "validation": val.error(wr, K)},
        "weights": w.tolist(), "weights_rounded": wr.tolist(),
        "seconds_extract": seconds_extract,
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
