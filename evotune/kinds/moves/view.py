"""The move-model kind's view: what a move-model training (:mod:`.solver`) shows: its status lines and record,
and its plot (loss, and held-out top-1 / top-3 accuracy, per epoch)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import StoreError
from ...reporting.figure import new_figure
from ...reporting.plots import save_figure
from ...runs.store import Store
from .checkpoint import Checkpoint, read_checkpoint
from .config import MoveRunConfig

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def moves_status(store: Store) -> tuple[dict, list[str]]:
    """(the JSON record, the lines) of ``evotune status`` for a move-model training."""
    cfg = store.manifest().config
    assert isinstance(cfg, MoveRunConfig)
    cp = read_checkpoint(store)
    total = max(cfg.steps, cp.state.epoch)
    b = cp.baseline
    info = {"run_id": store.run_id, "kind": cfg.kind, "target": cfg.settings.target,
            "epoch": cp.state.epoch, "epochs": total,
            "finished": cp.state.epoch >= total, "seconds": round(cp.seconds, 3),
            "baseline": b, "history": [vars(e) for e in cp.epochs]}
    lines = [f"move-model training {store.run_id}: epoch {cp.state.epoch}/{total} "
             f"({'finished' if info['finished'] else 'not finished'}), {cp.seconds:.1f} s",
             f"data        {', '.join(cfg.data)}",
             "target      " + ("the chosen move" if cfg.settings.target == "move" else
                               "UCT's visit distribution (the training loss against the visit "
                               "shares; held out: the chosen move)"),
             f"baseline    held-out loss {b['loss']:.3f}, top-1 {_pct(b['top1'])}, "
             f"top-3 {_pct(b['top3'])} (ordering prior)"]
    lines += [f"epoch {e.epoch:<5} train loss {e.train_loss:.3f}; held-out loss {e.loss:.3f}, "
              f"top-1 {_pct(e.top1)}, top-3 {_pct(e.top3)}" for e in cp.epochs]
    return info, lines


def moves_figure(run_id: str, cp: Checkpoint) -> Figure:
    """Loss (training and held-out) and held-out top-1 / top-3 accuracy per epoch, the
    ordering prior's held-out figures as dashed lines."""
    fig = new_figure(figsize=(10, 4.2))
    loss, acc = fig.subplots(1, 2)
    x = [e.epoch for e in cp.epochs]
    loss.plot(x, [e.train_loss for e in cp.epochs], "o-", label="training (mean over the epoch)")
    loss.plot(x, [e.loss for e in cp.epochs], "s-", label="held-out")
    loss.axhline(cp.baseline["loss"], ls="--", color="grey", label="ordering prior (held-out)")
    loss.set_ylabel("cross-entropy (nats)")
    acc.plot(x, [100 * e.top1 for e in cp.epochs], "o-", label="top-1")
    acc.plot(x, [100 * e.top3 for e in cp.epochs], "s-", label="top-3")
    for key, name in (("top1", "top-1"), ("top3", "top-3")):
        acc.axhline(100 * cp.baseline[key], ls="--", color="grey", lw=0.8)
        acc.annotate(f"prior {name}", (x[0], 100 * cp.baseline[key]), fontsize=8, color="grey")
    acc.set_ylabel("held-out accuracy (%)")
    for ax, what in ((loss, "loss"), (acc, "accuracy")):
        ax.set_xlabel("epoch")
        ax.set_title(f"{run_id}: {what}")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    return fig


def write_moves_plot(store: Store, out_dir: str | Path) -> list[Path]:
    """moves.png and moves.svg under ``out_dir/<run-id>/``."""
    cp = read_checkpoint(store)
    if not cp.epochs:
        raise StoreError(f"training {store.run_id} has no finished epoch yet; plot it after one")
    folder = Path(out_dir) / store.run_id
    folder.mkdir(parents=True, exist_ok=True)
    fig = moves_figure(store.run_id, cp)
    paths = []
    for fmt in ("png", "svg"):
        path = folder / f"moves.{fmt}"
        save_figure(fig, path, dpi=100)
        paths.append(path)
    return paths
