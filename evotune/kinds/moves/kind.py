"""The move-model kind: move-model trainings (``evotune nn train-moves``). Its solver is
:mod:`.solver` (new, open, execute), its checkpoint :mod:`.checkpoint`, its view :mod:`.view`;
here is what the commands ask of it: its epoch lines and summary, status, row, plot and model
export. It plays no verification and recommends a model, not a weight vector."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import ConfigError, FieldError, Interrupted
from ...learn.movetrain import EpochReport
from ...runs.registry import StoredKind
from ...runs.rundata import Recommendation, RunData
from ...runs.runkind import Exported, ExportRequest, Job, ResumeRequest, RunUI, Status, Summary, ViewRequest
from ...runs.store import Store
from ..view import no_games_budget, of_total, started
from .checkpoint import MODEL_FILE, read_checkpoint, stored_model
from .config import MoveRunConfig, read_stored
from .solver import execute_move_run, new_move_run, open_move_run
from .view import moves_status, write_moves_plot

MOVES_STORED = StoredKind(MoveRunConfig.kind, read_stored, data_files=True, weights=False)
"""Move-model trainings as the store reads them."""


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def epoch_line(r: EpochReport) -> str:
    """One epoch as ``nn train-moves`` prints it."""
    h = r.held_out
    return (f"epoch {r.epoch}: train loss {r.train_loss:.3f}; held-out loss {h.loss:.3f}, "
            f"top-1 {_pct(h.top1)}, top-3 {_pct(h.top3)}")


class MovesKind:
    """Move-model trainings: one checkpoint (with every epoch's figures) per epoch."""

    name = MoveRunConfig.kind
    stored = MOVES_STORED
    overlays = False
    reads: frozenset[str] = frozenset()
    config_class = MoveRunConfig

    def new(self, config: MoveRunConfig, *, out_dir: str | Path, run_id: str | None,
            workers: int, ui: RunUI, **start: Any) -> Job:
        store, data = new_move_run(config, out_dir=out_dir, run_id=run_id)
        return Job(store=store, plan=config, data=data)

    def resume(self, store: Store, request: ResumeRequest) -> Job:
        no_games_budget(store.run_id, "a move-model training", max_games=request.max_games,
                        max_seconds=request.max_seconds)
        generations = request.generations
        cfg = store.manifest().config
        assert isinstance(cfg, MoveRunConfig)
        if generations is not None:
            try:
                cfg = replace(cfg, settings=replace(cfg.settings, epochs=generations))
            except FieldError as exc:  # resume's flag is --generations (the epochs)
                raise ConfigError(f"--generations {exc.problem}") from None
        return Job(store=store, plan=cfg, data=open_move_run(store))

    def execute(self, job: Job, ui: RunUI) -> Summary:
        """Runs (or continues) the training, a line per epoch; its summary lines."""
        store, cfg = job.store, job.plan
        b = read_checkpoint(store).baseline
        ui.info(f"training {store.run_id} in {store.root}; {len(job.data)} positions, "
                f"{job.data.feats.shape[0]} legal moves; held-out baseline (ordering prior): "
                f"loss {b['loss']:.3f}, top-1 {_pct(b['top1'])}, top-3 {_pct(b['top3'])}")
        lines: list[str] = []
        try:
            cp = execute_move_run(store, cfg, job.data,
                                  report=lambda r: ui.info(epoch_line(r)))
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; every finished epoch is stored: continue with "
                              f"'evotune resume {store.run_id}'") from None
        last = cp.epochs[-1] if cp.epochs else None
        if last is not None:
            lines.append(f"move-model training {store.run_id}: {last.epoch} epochs, "
                         f"{cp.seconds:.1f} s; held-out loss {last.loss:.3f}, top-1 "
                         f"{_pct(last.top1)}, top-3 {_pct(last.top3)}")
            if (store.root / MODEL_FILE).is_file():  # a resume has no --out: say where it is
                lines.append(f"model {store.root / MODEL_FILE} ('evotune export {store.run_id} "
                             "--format evotune --out FILE' copies it)")
        return Summary(run_id=store.run_id, lines=tuple(lines), record=cp)

    def status(self, store: Store, *, every: bool) -> Status:
        info, lines = moves_status(store)
        return Status(info=info, lines=tuple(lines))

    def row(self, store: Store) -> tuple[str, ...]:
        cp = read_checkpoint(store)
        total = max(store.manifest().config.steps, cp.state.epoch)
        last = cp.epochs[-1] if cp.epochs else None
        return (store.run_id, "-", f"epoch {of_total(cp.state.epoch, total)}",
                f"{len(cp.epochs)} epochs",
                f"top-1 {_pct(last.top1)} (held-out)" if last else "-",
                "finished" if cp.state.epoch >= total else "not finished", started(store))

    def plot(self, stores: Sequence[Store], request: ViewRequest) -> list[Path]:
        return write_moves_plot(stores[0], request.out)

    def report(self, store: Store, request: ViewRequest) -> list[Path]:
        raise ConfigError(f"run '{store.run_id}' is a move-model training: it has no report; "
                          f"'evotune status {store.run_id}' and 'evotune plot' show it")

    def export(self, store: Store, request: ExportRequest) -> Exported:
        fmt, out_file = request.fmt, request.out_file
        if out_file is None:
            raise ConfigError(f"run '{store.run_id}' is a move-model training: its model is "
                              "binary; give --out FILE")
        if fmt != "evotune":
            raise ConfigError(f"run '{store.run_id}' is a move-model training: export it with "
                              f"--format evotune (its .evomove file), not {fmt!r}")
        data = stored_model(store)
        return Exported(data=data, what=f"move model, {len(data)} bytes")

    def verify(self, store: Store, *, settings: Any, runs_dir: str,
               progress: Callable | None) -> dict:
        raise ConfigError(f"run '{store.run_id}' is a move-model training: play its model with "
                          "'[search] prior = \"model:FILE\"' in a match instead")

    def recommend(self, run: RunData, rule: str) -> Recommendation:
        raise ConfigError(f"run '{run.run_id}' trained a move model, which is not a vector of "
                          "evaluation weights")


MOVES = MovesKind()
"""The move-model kind (registered by :mod:`evotune.kinds`)."""
