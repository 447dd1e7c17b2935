"""The fit kind: Texel fits of evaluation weights to positions (``evotune texel``). Its plan is
:mod:`.plan`, its solver :mod:`.solver` (new, open, execute); here is what the commands ask of
it: its epoch lines and summary, status, row and the weights it recommends (its last epoch's)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...datafiles import DataFile, data_files_from_list
from ...errors import Interrupted
from ...runs.records import Generation
from ...runs.registry import StoredKind
from ...runs.rundata import Recommendation, RunData, run_spec
from ...runs.runkind import Job, ResumeRequest, RunUI, Summary
from ...runs.store import Store
from ..view import no_games_budget, of_total, started
from ..weights import WeightsKind
from .config import TexelConfig, is_v1_fit, texel_config_from_dict, texel_config_from_v1
from .plan import plan_fit
from .solver import execute_fit, new_fit, open_fit, read_data


def _read_fit(d: dict, config: dict, fmt: int) -> tuple[TexelConfig, tuple[DataFile, ...]]:
    if fmt == 1:
        return texel_config_from_v1(config)
    return texel_config_from_dict(config), data_files_from_list(d.get("data_files"))


FIT_STORED = StoredKind(TexelConfig.kind, _read_fit, data_files=True, format1=is_v1_fit)
"""Fits to positions (:class:`TexelConfig`) as the store reads them (format 1: a RunConfig
named 'texel', read exactly or refused)."""


class FitKind(WeightsKind):
    """Texel fits: one weight vector per epoch."""

    name = TexelConfig.kind
    stored = FIT_STORED
    reads = frozenset({"squares", "rule", "engine"})  # no games: its x axis is its epochs
    config_class = TexelConfig
    stds = False

    def new(self, config: TexelConfig, *, out_dir: str | Path, run_id: str | None,
            workers: int, ui: RunUI, **start: Any) -> Job:
        plan = plan_fit(config)
        data = read_data(plan, workers=workers)
        store = new_fit(plan, data, out_dir=out_dir, run_id=run_id)
        return Job(store=store, plan=plan, data=data, workers=workers)

    def resume(self, store: Store, request: ResumeRequest) -> Job:
        no_games_budget(store.run_id, "a fit", max_games=request.max_games,
                        max_seconds=request.max_seconds)
        generations = request.generations
        cfg = open_fit(store)
        if generations is not None:
            cfg = cfg.with_epochs(generations)
        return Job(store=store, plan=plan_fit(cfg), workers=request.workers or 0)

    def execute(self, job: Job, ui: RunUI) -> Summary:
        """Runs (or continues) a fit with one stderr line per epoch; its summary lines."""
        store = job.store
        lines = ui.progress("fit", 0, "epochs")

        def show(ev) -> None:
            if ev.kind == "stage":
                lines.line(ev.message)
            else:
                lines.line(f"  epoch {ev.epoch}/{ev.epochs}  error train {ev.loss_train:.6f}  "
                           f"validation {ev.loss_val:.6f}")

        ui.info(f"fit {store.run_id} in {store.root}")
        try:
            data = job.data or read_data(job.plan, workers=job.workers)
            s = execute_fit(store, job.plan, data, progress=show)
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; every finished epoch is stored: continue with "
                              f"'evotune resume {store.run_id}'") from None
        b, a = s["error_before_rounding"], s["error_after_rounding"]
        valid = (f"validation {s['error_initial']['validation']:.6f} -> {b['validation']:.6f} "
                 f"(rounded {a['validation']:.6f})" if s["validation"] else
                 "no validation positions (--val-share 0): nothing measures overfitting")
        out = (f"fit {s['run_id']}: {s['train']} training + {s['validation']} validation "
               f"positions, K {s['K']:.4f}, --l2 {s['l2']:g}"
               + (" (chosen by validation error)" if s["l2_chosen_by_validation"] else "")
               + f", {s['epochs']} epochs" + (" (converged)" if s["converged"] else ""),
               f"error train {s['error_initial']['train']:.6f} -> {b['train']:.6f} "
               f"(rounded {a['train']:.6f}); {valid}")
        notes = (f"evotune: warning: {s['warning']}",) if s["warning"] else ()
        return Summary(run_id=s["run_id"], lines=out, notes=notes, record=s)

    def status_info(self, store: Store, info: dict, last: Generation | None) -> dict:
        stats = dict(last.stats) if last else {}
        info.update(loss_train=stats.get("loss_train"), loss_val=stats.get("loss_val"))
        return info

    def status_head(self, store: Store, info: dict, done: str) -> list[str]:
        cfg = store.manifest().config
        doc = store.read_document("texel") or {}
        positions = (f", {doc['train']:,} training + {doc['validation']:,} validation positions"
                     if "train" in doc else "")
        errors = ""
        if info["loss_train"] is not None:
            val = info["loss_val"]
            errors = (f", error train {info['loss_train']:.6f} validation "
                      + (f"{val:.6f}" if val is not None else "-"))
        return [f"fit {store.run_id}: texel on {cfg.engine}, epoch "
                f"{of_total(info['generation'], cfg.epochs)}{positions}{errors}, {done}"]

    def row(self, store: Store) -> tuple[str, ...]:
        cfg, state = store.manifest().config, store.current_state()
        done = state.generation if state else 0
        fin = "finished" if state and state.finished else "stopped"
        summary = store.read_document("texel") or {}
        positions = (f"{summary['train'] + summary['validation']:,} positions"
                     if "train" in summary else "-")
        error = "-"
        if state is not None and state.generation > 0:
            stats = store.read_generation(state.generation).stats
            error = f"error {stats.get('loss_val', stats.get('loss_train', 0.0)):.5f}"
        return (store.run_id, "texel", f"epoch {of_total(done, cfg.epochs)}", positions, error,
                fin, started(store))

    def recommend(self, run: RunData, rule: Any) -> Recommendation:
        """The last epoch's weights, rounded into the space (one vector whatever the rule)."""
        g = run.last
        space = run_spec(run).space()
        w = space.round(np.clip(run.populations[-1][0], space.lower_array, space.upper_array))
        return Recommendation(rule=rule, weights=tuple(float(v) for v in w), generation=g,
                              description=f"Texel fit after epoch {g}, rounded")


FIT = FitKind()
"""The fit kind (registered by :mod:`evotune.kinds`)."""
