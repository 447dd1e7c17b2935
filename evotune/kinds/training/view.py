"""The training kind's view: what the run commands show of a net training (a run of kind
'train'): its status, its loss curves (training and validation loss per epoch), its report and
its net exported. Everything is read from the run folder (the checkpoint and the epoch
records), so it works on any stored epoch of a running, stopped or killed training.
"""
from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...engine.net.network import FORMATS, net_bytes
from ...errors import ConfigError, StoreError
from ...fileio import atomic_write_text
from ...reporting.figure import new_figure
from ...reporting.plots import save_figure
from ...runs.store import Store
from ...runs.trainrecords import EpochLine
from ...verify.text import describe_match, describe_verification
from .config import TrainConfig
from .solver import stored_net

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class TrainingView:
    """A stored training as the readers see it."""

    run_id: str
    root: Path
    config: TrainConfig
    epochs: list[EpochLine]
    """The records of the stored epochs, in order."""
    finished: bool
    seconds: float
    checksum: str
    """The checksum of the stored net (the last epoch's, or the initial net's at epoch 0)."""
    verify: dict | None = None
    """The latest verification (verify.json), or None."""

    @property
    def total(self) -> int:
        """The epochs to train: the config's, or more when a resume raised them."""
        return max(self.config.steps, len(self.epochs))

    def info(self) -> dict:
        """The status as one JSON object."""
        return {"run_id": self.run_id, "kind": "train", "strategy": self.config.method,
                "epoch": len(self.epochs), "epochs": self.total,
                "finished": self.finished, "seconds": round(self.seconds, 2),
                "checksum": self.checksum,
                "records": [e.to_json() for e in self.epochs]}


def load_training(store: Store) -> TrainingView:
    """Read a training's config, state and epoch records (StoreError when it is not one)."""
    manifest = store.manifest()
    if not isinstance(manifest.config, TrainConfig):
        raise StoreError(f"run '{store.run_id}' is a {manifest.kind} run, not a training")
    state = store.read_state()
    got = store.read_checkpoint()
    if got is None:
        raise StoreError(f"training '{store.run_id}' has no checkpoint yet (it stopped before "
                         f"its first one); start it with 'evotune resume {store.run_id}'")
    epoch = int(got[1]["epoch"])
    return TrainingView(run_id=store.run_id, root=store.root, config=manifest.config,
                        epochs=store.epoch_lines(epoch),
                        finished=bool(state and state.finished and state.generation == epoch),
                        seconds=float(got[1]["seconds"]),
                        checksum=stored_net(store).checksum, verify=store.read_verify())


def verify_lines(view: TrainingView) -> list[str]:
    """The report's verification: what ``evotune verify`` printed when it last ran."""
    v = view.verify
    if not v:
        return [f"no verification yet (run `evotune verify {view.run_id}`)"]
    out = describe_verification(v)
    if v.get("generation") != len(view.epochs):
        out.append(f"the training is now at epoch {len(view.epochs)}; run `evotune verify "
                   f"{view.run_id}` again to verify its current net")
    if v.get("note"):
        out.append(str(v["note"]))
    return out + [describe_match(m) for m in v.get("matches", [])]


def status_lines(view: TrainingView) -> list[str]:
    lines = [f"run {view.run_id}: net training {view.config.net_text}, epoch "
             f"{len(view.epochs)}/{view.total}, {view.seconds:.1f} s, "
             f"{'finished' if view.finished else 'not finished'}, net {view.checksum}"]
    for e in view.epochs:
        val = f"{e.val_loss:.6f}" if e.val_loss is not None else "-"
        lines.append(f"  epoch {e.epoch:>4}  loss train {e.train_loss:.6f}  validation {val}  "
                     f"lr {e.lr:.3g}  {e.positions / max(e.seconds, 1e-9):,.0f} pos/s  "
                     f"net {e.checksum}")
    return lines


def loss_figure(view: TrainingView) -> Figure:
    """Training and validation loss per epoch."""
    fig = new_figure(figsize=(7, 4.2))
    ax = fig.add_subplot()
    x = [e.epoch for e in view.epochs]
    ax.plot(x, [e.train_loss for e in view.epochs], "o-", label="training (mean over the epoch)")
    val = [(e.epoch, e.val_loss) for e in view.epochs if e.val_loss is not None]
    if val:
        ax.plot(*zip(*val), "s-", label="validation (after the epoch)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean squared error")
    ax.set_title(f"{view.run_id}: loss")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def write_loss_plot(view: TrainingView, out_dir: str | Path) -> tuple[Path, Path]:
    """loss.png and loss.svg under ``out_dir/<run-id>/``."""
    if not view.epochs:
        raise StoreError(f"training {view.run_id} has no finished epoch yet; plot it after one")
    folder = Path(out_dir) / view.run_id
    folder.mkdir(parents=True, exist_ok=True)
    fig = loss_figure(view)
    paths = []
    for fmt in ("png", "svg"):
        path = folder / f"loss.{fmt}"
        save_figure(fig, path, dpi=100)
        paths.append(path)
    return paths[0], paths[1]


def _table(view: TrainingView) -> tuple[list[str], list[list[str]]]:
    head = ["epoch", "lr", "train loss", "validation loss", "positions", "seconds", "net"]
    rows = [[str(e.epoch), f"{e.lr:.3g}", f"{e.train_loss:.6f}",
             f"{e.val_loss:.6f}" if e.val_loss is not None else "-", str(e.positions),
             f"{e.seconds:.1f}", e.checksum] for e in view.epochs]
    return head, rows


def write_training_report(view: TrainingView, out_dir: str | Path) -> tuple[Path, Path]:
    """report.md and a self-contained report.html (with the loss plot) under
    ``out_dir/<run-id>/``."""
    png, _ = write_loss_plot(view, out_dir)
    head, rows = _table(view)
    progress = status_lines(view)[0]
    md = [f"# evotune report: {view.run_id}", "", "## Configuration", ""]
    md += [f"- {k}: {v}" for k, v in view.config.summary_items()]
    md += ["", "## Progress", "", progress, "", "## Epochs", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    md += ["", f"The net: `{view.root / 'net.nnue'}` (checksum {view.checksum}); "
           f"`evotune export {view.run_id} --format evotune|bullet --out FILE` writes it.",
           "", "## Verification", ""]
    md += [f"- {line}" for line in verify_lines(view)]
    md += ["", "## Plots", "", f"![loss]({png.name})", ""]
    e = html.escape
    b64 = base64.b64encode(png.read_bytes()).decode("ascii")
    page = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
            f"<title>evotune report: {e(view.run_id)}</title>",
            "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #999;padding:3px 8px;"
            "text-align:right}img{max-width:100%}</style></head><body>",
            f"<h1>evotune report: {e(view.run_id)}</h1>", "<h2>Configuration</h2><ul>"]
    page += [f"<li>{e(k)}: {e(v)}</li>" for k, v in view.config.summary_items()]
    page += ["</ul>", "<h2>Progress</h2>", f"<p>{e(progress)}</p>", "<h2>Epochs</h2><table><tr>"
             + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>"]
    page += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows]
    page += ["</table>", "<h2>Verification</h2><ul>"]
    page += [f"<li>{e(line)}</li>" for line in verify_lines(view)]
    page += ["</ul>", "<h2>Plots</h2>",
             f"<img alt=\"loss\" src=\"data:image/png;base64,{b64}\">", "</body></html>"]
    folder = png.parent
    atomic_write_text(folder / "report.md", "\n".join(md))
    atomic_write_text(folder / "report.html", "\n".join(page) + "\n")
    return folder / "report.md", folder / "report.html"


def export_training(store: Store, fmt: str) -> bytes:
    """The bytes of the training's stored net in ``fmt`` ('evotune' or 'bullet')."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt}: a training exports its net as "
                          f"{' or '.join(FORMATS)}")
    load_training(store)
    return net_bytes(stored_net(store), fmt)
