"""The training kind: net trainings (``evotune nn train``). Its solver is :mod:`.solver` (new,
open, execute) and its view :mod:`.view`; here is what the commands ask of it: its epoch lines and
summary, status, row, loss plot, report, net export and verification. A training recommends a
net, not a weight vector."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...datafiles import DataFile, data_files_from_list
from ...engine.net.network import bullet_reader_note, read_net
from ...errors import ConfigError, FieldError, Interrupted
from ...learn.nn.initnet import INITIAL_FILE
from ...reporting.tables import clock
from ...runs.registry import StoredKind
from ...runs.rundata import Recommendation, RunData
from ...runs.runkind import (
    Bar,
    Exported,
    ExportRequest,
    Job,
    ResumeRequest,
    RunUI,
    Status,
    Summary,
    ViewRequest,
)
from ...runs.store import Store
from ...verify.run import verify_training
from ..view import no_games_budget, of_total, started
from .config import TrainConfig, train_config_from_dict
from .plan import plan_training
from .solver import execute_training, new_training, open_plan, stored_net
from .view import export_training, load_training, status_lines, write_loss_plot, write_training_report


def _read_train(d: dict, config: dict, fmt: int) -> tuple[TrainConfig, tuple[DataFile, ...]]:
    return train_config_from_dict(config), data_files_from_list(d.get("data_files"))


TRAIN_STORED = StoredKind(TrainConfig.kind, _read_train, data_files=True, weights=False)
"""Net trainings (:class:`TrainConfig`) as the store reads them."""
FEW_STEPS = 20
"""Fewer optimiser steps an epoch than this draw a note after the training."""


def few_steps_note(train_positions: int, batch: int) -> str:
    """A note when ``train_positions`` make fewer than :data:`FEW_STEPS` mini-batches of
    ``batch`` an epoch ('' otherwise): on 40k positions the default batch (16,384) makes 3 AdamW
    steps an epoch, and 20 epochs left a net far from converged (it lost 2-0-398 to the Texel
    evaluation its data came from; docs/results/nn-study.md)."""
    if batch <= 0:
        return ""
    steps = -(-train_positions // batch)
    if steps >= FEW_STEPS:
        return ""
    smaller = max(64, 1 << max(0, (train_positions // FEW_STEPS).bit_length() - 1))
    if smaller >= batch:  # the batch is small already: only more positions make more steps
        return (f"{train_positions} training positions make {steps} optimiser step(s) an epoch "
                f"at --batch {batch}; a data set this small trains a net little: more "
                "positions (or more epochs) train further")
    return (f"{train_positions} training positions make {steps} optimiser step(s) an epoch at "
            f"--batch {batch}; on a data set this small a smaller --batch (e.g. {smaller}, "
            f"{-(-train_positions // smaller)} steps) trains further in the same epochs")


class TrainBar:
    """A training's progress: the positions of the epoch being trained with the trainer's rate
    and time left, and one line per finished epoch."""

    def __init__(self, epochs: int, bar: Bar, *, what: str = "") -> None:
        self.epochs = epochs
        self.bar = bar
        self.what = what
        """Before 'epoch E/N' in the label (the fit of an eval: initial net names it)."""
        self.rate = 0.0
        self.left = 0.0

    def __call__(self, p) -> None:
        self.rate, self.left = p.rate, p.seconds_left
        self.bar.update(p.done, p.total, label=f"{self.what}epoch {p.epoch}/{self.epochs}",
                        rate=p.rate,
                        left=p.seconds_left)

    def epoch(self, e) -> None:
        val = f"{e.val_loss:.6f}" if e.val_loss is not None else "-"
        self.bar.line(f"  epoch {e.epoch}/{self.epochs}  loss train {e.train_loss:.6f}  "
                      f"validation {val}  lr {e.lr:.3g}  {self.rate:,.0f} positions/s  "
                      f"{clock(self.left)} left  net {e.checksum}")

    def close(self) -> None:
        self.bar.close()


class TrainingKind:
    """Net trainings: one net checkpoint and one record per epoch."""

    name = TrainConfig.kind
    stored = TRAIN_STORED
    overlays = False
    reads: frozenset[str] = frozenset()
    config_class = TrainConfig

    def new(self, config: TrainConfig, *, out_dir: str | Path, run_id: str | None,
            workers: int, ui: RunUI, **start: Any) -> Job:
        reading = ui.progress("reading the data", 0, "positions")
        fitting: list[TrainBar] = []  # an eval: initial net's fit, once the data is read
        fit_started = time.perf_counter()

        def fit_progress(p) -> None:
            nonlocal fit_started
            if not fitting:
                reading.close()
                fit_started = time.perf_counter()
                what = f"initial net ({config.init}) "
                fitting.append(TrainBar(config.init_epochs, ui.progress(
                    f"{what}epoch 1/{config.init_epochs}", 0, "positions"), what=what))
            fitting[0](p)

        plan = plan_training(config, check_data=True)
        try:
            store, packed = new_training(plan, out_dir=out_dir, run_id=run_id,
                                         workers=workers, progress=reading.update,
                                         init_progress=fit_progress)
        finally:
            reading.close()
            for bar in fitting:
                bar.close()
        if config.fits_eval:
            ui.info(f"initial net {read_net(store.root / INITIAL_FILE).checksum}: "
                    f"{config.init_epochs} epochs on {config.init.removeprefix('eval:')}'s "
                    f"scores of the positions, {time.perf_counter() - fit_started:.1f} s")
        return Job(store=store, plan=plan, data=packed, workers=workers)

    def resume(self, store: Store, request: ResumeRequest) -> Job:
        no_games_budget(store.run_id, "a training", max_games=request.max_games,
                        max_seconds=request.max_seconds)
        generations, workers = request.generations, request.workers
        plan = open_plan(store)
        if generations is not None:
            try:
                plan = plan.with_epochs(generations)
            except FieldError as exc:  # resume's flag is --generations (a training's epochs)
                if exc.field != "epochs":
                    raise
                raise ConfigError(f"--generations {exc.problem}") from None
        return Job(store=store, plan=plan, workers=0 if workers is None else workers)

    def execute(self, job: Job, ui: RunUI) -> Summary:
        """Runs (or continues) a training with its progress line; its summary lines."""
        store, plan = job.store, job.plan
        bar = TrainBar(plan.config.steps, ui.progress(f"epoch 1/{plan.config.steps}", 0,
                                                      "positions"))
        try:
            s = execute_training(store, plan, data=job.data, progress=bar, on_epoch=bar.epoch,
                                 workers=job.workers, on_start=lambda: ui.info(
                                     f"training {store.run_id} in {store.root}"))
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; every finished epoch is stored: continue with "
                              f"'evotune resume {store.run_id}'") from None
        finally:
            bar.close()
        last = s.epochs[-1] if s.epochs else None
        losses = (f"loss train {last.train_loss:.6f}, validation "
                  + (f"{last.val_loss:.6f}" if last.val_loss is not None else "-")) if last else ""
        lines = (f"training {s.run_id}: {len(s.epochs)} epochs on {s.train_positions} of "
                 f"{s.positions} positions, {s.seconds:.1f} s; {losses}",
                 f"net {s.net_path} (checksum {s.checksum})")
        note = few_steps_note(s.train_positions, plan.settings.batch)
        return Summary(run_id=s.run_id, lines=lines,
                       notes=(f"evotune: note: {note}",) if note else (), record=s)

    def status(self, store: Store, *, every: bool) -> Status:
        view = load_training(store)
        return Status(info=view.info(), lines=tuple(status_lines(view)))

    def row(self, store: Store) -> tuple[str, ...]:
        view = load_training(store)
        last = view.epochs[-1] if view.epochs else None
        positions = f"{last.positions:,} positions" if last else "-"
        loss = "-"
        if last is not None:
            loss = (f"loss {last.val_loss:.5f} (validation)" if last.val_loss is not None
                    else f"loss {last.train_loss:.5f} (training)")
        return (store.run_id, "-",
                f"epoch {of_total(len(view.epochs), view.total)}", positions, loss,
                "finished" if view.finished else "stopped", started(store))

    def plot(self, stores: Sequence[Store], request: ViewRequest) -> list[Path]:
        return list(write_loss_plot(load_training(stores[0]), request.out))

    def report(self, store: Store, request: ViewRequest) -> list[Path]:
        md, page = write_training_report(load_training(store), request.out)
        return [page, md]

    def export(self, store: Store, request: ExportRequest) -> Exported:
        fmt, out_file = request.fmt, request.out_file
        if out_file is None:
            raise ConfigError(f"run '{store.run_id}' is a training: its net is binary; give "
                              "--out FILE")
        data = export_training(store, fmt)
        note = bullet_reader_note(stored_net(store)) if fmt == "bullet" else ""
        return Exported(data=data, what=f"{fmt}, {len(data)} bytes",
                        after=(f"evotune: note: {out_file}: {note}",) if note else ())

    def verify(self, store: Store, *, settings: Any, runs_dir: str,
               progress: Callable | None) -> dict:
        cfg = store.manifest().config
        if not isinstance(cfg, TrainConfig):
            raise ConfigError(f"run '{store.run_id}' is not a training")
        return verify_training(store, initial=cfg.initial, settings=settings, progress=progress)

    def recommend(self, run: RunData, rule: str) -> Recommendation:
        raise ConfigError(f"run '{run.run_id}' trained a net, which is not a vector of "
                          "evaluation weights")


TRAINING = TrainingKind()
"""The training kind (registered by :mod:`evotune.kinds`)."""
