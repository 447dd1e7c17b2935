"""The fit's solver: a Texel fit of its plan (:class:`~.plan.FitPlan`) as a run of its own kind
under ``populations/<run-id>/`` (through :class:`evotune.runs.store.Store`).

Its generations look like an evolutionary run's with a population of one, so ``status``,
``plot``, ``report``, ``verify`` and ``export`` read it as any run:

- manifest: ``kind = "fit"``, the :class:`TexelConfig`, the data files' names, sizes and
  SHA-256 (``data_files``) and the identity: hashes of the config, the engine spec, the initial
  weights file and the data files;
- ``gen-0000``: the initial weights and their error (K already fitted); ``gen-E``: the weights
  after epoch E, with ``loss_train``, ``loss_val`` and ``K`` as statistics;
- ``state.json``: the last epoch, K, the weights and the optimizer's state (Adam's moments);
  a killed fit resumed with ``evotune resume RUN`` equals an uninterrupted one;
- ``texel.json``: the summary (positions used and rejected, K, errors before and after rounding
  to whole engine units).

A fit is a solver of its own, not a :class:`evotune.tuning.fitness.Fitness` of the tuning loop:
see docs/architecture.md ("A fit is its own solver").
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...datafiles import DataFile
from ...errors import StoreError
from ...learn import texel as tx
from ...learn.fitdata import FitData, choose_l2, fit_data
from ...learn.labels import data_files, file_record
from ...runs.manifest import check_new_run
from ...runs.records import Generation, State
from ...runs.store import Store
from ...spec.file import resolve_engine_spec_path
from .config import STRATEGY, TexelConfig
from .plan import FitPlan

log = logging.getLogger(__name__)


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



def fit_identity(cfg: TexelConfig, files: tuple[DataFile, ...]) -> dict:
    """Hashes (strings) of the config, engine spec, initial weights file and data files."""
    parts = {
        "config": _digest_text(json.dumps(cfg.identity_dict(), sort_keys=True)),
        "engine_spec": file_record(resolve_engine_spec_path(cfg.engine))["sha256"],
        "openings": "none",
        "init": "reference" if cfg.init == "reference" else file_record(Path(cfg.init))["sha256"],
        "data": _digest_text(json.dumps([f.to_json() for f in files], sort_keys=True)),
    }
    parts["hash"] = _digest_text(json.dumps(parts, sort_keys=True))[:16]
    return parts


def read_data(plan: FitPlan, *, workers: int = 0) -> FitData:
    """The plan's positions read, turned into feature rows and split (ConfigError, one line,
    for a bad file or too few usable positions); ``workers``: threads extracting features (0 =
    one per core), on which the data does not depend. A new fit reads them before its run
    folder is made; a resumed one reads them again (its files checked unchanged)."""
    return fit_data(plan.config, evaluation=plan.evaluation, w0=plan.w0, workers=workers)


def new_fit(plan: FitPlan, data: FitData, *, out_dir: str | Path = "populations",
            run_id: str | None = None) -> Store:
    """Create the run directory of a new fit of ``plan`` whose ``data`` (:func:`read_data`)
    were read and checked already, so a bad input leaves nothing behind."""
    cfg = plan.config
    files = data_files(cfg.data)
    identity = fit_identity(cfg, files)
    run_id = run_id or f"texel-{time.strftime('%Y%m%d-%H%M%S')}-{identity['hash'][:6]}"
    check_new_run(out_dir, run_id)
    return Store.create(out_dir, run_id, config=cfg, identity=identity, data_files=files)


def open_fit(store: Store) -> TexelConfig:
    """The config of a stored fit, after checking that its inputs did not change; takes the
    run's writer lock."""
    manifest = store.manifest()
    cfg = manifest.config
    if not isinstance(cfg, TexelConfig):
        raise StoreError(f"run '{store.run_id}' is a {manifest.kind} run, not a fit")
    store.lock()
    for p in cfg.data + (() if cfg.init == "reference" else (cfg.init,)):
        if not Path(p).is_file():
            what = "data file" if p in cfg.data else "initial weights file"
            raise StoreError(f"fit '{store.run_id}' cannot be resumed: its {what} {p} is "
                             "missing; put it back (same size and SHA-256) and resume again, "
                             "or start a new fit")
    now = fit_identity(cfg, data_files(cfg.data))
    stored = manifest.identity
    changed = [k for k in ("config", "engine_spec", "init", "data") if stored.get(k) != now.get(k)]
    if changed:
        raise StoreError(f"fit '{store.run_id}' cannot be resumed: its "
                         + ", ".join(changed) + " changed since it started (data files must "
                         "keep their size and SHA-256); restore them or start a new fit")
    return cfg


def execute_fit(store: Store, plan: FitPlan, data: FitData, *,
                progress: Callable[[FitProgress], None] | None = None) -> dict:
    """Run (or continue) the fit of ``plan`` stored in ``store`` on its ``data``
    (:func:`read_data`); returns the texel.json summary.

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
    cfg, space, w0 = plan.config, plan.space, plan.w0
    for message in data.messages:
        say(message)
    ex, positions, X, y = data.extracted, data.positions, data.extracted.X, data.y
    free, lower, upper = space.free, space.lower_array, space.upper_array
    train = tx.Problem(X[data.train_idx], y[data.train_idx], free=free, lower=lower, upper=upper,
                       l2=0.0, center=w0)
    val = tx.Problem(X[data.val_idx], y[data.val_idx], free=free, lower=lower, upper=upper)

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
        l2 = cfg.ridge.l2 if cfg.ridge.l2 != "auto" else None
        if l2 is None:
            l2, tried = choose_l2(train, val, w0, K, cfg, say,
                                  groups=data.val_idx // cfg.validation.block)
        train.l2 = float(l2)
        stats, st = commit(0, w0, K, 0.0, converged=False)
    else:
        st = state.strategy
        train.l2 = float(st.get("l2", cfg.ridge.l2))  # fits stored before the choice was kept
    K = float(st["K"])
    w = np.asarray(st["weights"], dtype=np.float64)
    opt = tx.AdamState.from_dict(st["adam"])
    epoch = state.generation if state is not None else 0
    if not st["converged"]:
        t_ep = time.perf_counter()
        o = cfg.optimiser
        steps = tx.epochs(train, w, K, optimizer=o.name, iters=o.iters, lr=o.lr, tol=o.tol,
                          adam=opt, start=epoch, stop=cfg.epochs,
                          last=float(st["loss_train"]))
        for epoch, w, _, converged in steps:
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
    warning = weaker_warning(errors) if val.n else ""
    summary = {
        "run_id": store.run_id, "engine": cfg.engine, "names": list(space.names),
        "positions_read": len(positions), "bad_lines": positions.bad,
        "not_quiet": ex.not_quiet, "mate": ex.mate, "train": train.n, "validation": val.n,
        "K": K, "epochs": epoch, "converged": bool(st["converged"]), "l2": train.l2,
        "l2_chosen_by_validation": cfg.ridge.l2 == "auto", **({"l2_tried": tried} if tried else {}),
        **errors, "warning": warning,
        "weights": w.tolist(), "weights_rounded": wr.tolist(),
        "seconds_extract": data.seconds_extract,
        "data": [f.to_json() for f in store.manifest().data_files],
    }
    store.write_document("texel", summary)
    store.write_state(State(generation=epoch, games=0, finished=True, strategy=st,
                            seconds=seconds_before + time.perf_counter() - t_start))
    store.unlock()
    return summary


def weaker_warning(errors: dict) -> str:
    """One sentence when the fitted (rounded) weights' validation error is not below the
    start's: the fit is then likely weaker than its start; '' otherwise."""
    after = errors["error_after_rounding"]["validation"]
    start = errors["error_initial"]["validation"]
    if after < start:
        return ""
    return (f"the fit is likely weaker than its start: the fitted weights' validation error "
            f"{after:.6f} is not below the initial weights' {start:.6f} (they predict held-out "
            "games no better); keep the initial weights, or give more data or a larger --l2")


def fit_k_value(cfg: TexelConfig, problem: tx.Problem, w0: np.ndarray) -> float:
    """K from the config, or fitted with the initial weights."""
    return tx.fit_k(problem, w0) if cfg.k == "auto" else float(cfg.k)
