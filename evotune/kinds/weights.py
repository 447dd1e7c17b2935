"""What the two kinds that tune a weight vector (games runs, :mod:`.games`; Texel fits,
:mod:`.fit`) share: their generations are stored alike (one weight vector per population member
and generation, :func:`evotune.runs.rundata.load_run`), so their status record, plots, report,
export and verification are one (:class:`WeightsKind`); each kind adds its status line, its row,
its lifecycle and its recommendation."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..reporting.export import NET_FORMATS, export_net, export_run
from ..reporting.plots import write_plots
from ..reporting.report import write_report
from ..runs.records import Generation
from ..runs.rundata import load_run
from ..runs.runkind import Exported, ExportRequest, Status, ViewRequest
from ..runs.store import Store
from ..verify.run import verify_run
from .view import started, weight_lines


class WeightsKind(ABC):
    """The commands' side of a kind whose runs tune a weight vector (subclasses: games, fit)."""

    overlays = True
    reads: frozenset[str] = frozenset({"x", "squares", "rule", "engine"})
    """Runs of these kinds plot overlaid (``evotune plot RUN RUN2``)."""
    stds = True
    """Whether its status shows the population's deviations."""

    def budget(self, cfg: Any) -> int:
        """The run's games budget (0: none)."""
        return 0

    def population(self, cfg: Any) -> int:
        """The status record's ``np``: a games run's population; 1 for a kind that stores one
        weight vector per generation (a fit's epoch)."""
        return 1

    @abstractmethod
    def status_head(self, store: Store, info: dict, done: str) -> list[str]:
        """The first line(s) of the status (below: the weights); each kind writes its own."""

    def describes(self, cfg: Any) -> tuple[bool, str]:
        """(whether its status shows a population's deviations, the name of the vector shown:
        'mean', 'theta', 'value')."""
        return self.stds, "mean" if self.stds else "value"

    def status_info(self, store: Store, info: dict, last: Generation | None) -> dict:
        """The status record (``evotune status --json``) with the kind's fields added."""
        return info

    def status(self, store: Store, *, every: bool) -> Status:
        manifest = store.manifest()
        cfg, state = manifest.config, store.current_state()
        gens = store.generations(state)
        first, last = (gens[0], gens[-1]) if gens else (None, None)
        info: dict[str, Any] = {
            "run_id": store.run_id, "kind": manifest.kind, "strategy": cfg.method,
            "np": self.population(cfg), "generation": state.generation if state else 0,
            "generations": cfg.steps, "games": state.games if state else 0,
            "max_games": self.budget(cfg),
            "seconds": round(state.seconds, 2) if state else 0.0,
            "finished": bool(state and state.finished), "started": started(store),
            "names": list(last.names) if last else [],
            "mean": list(last.mean) if last else [], "std": list(last.std) if last else [],
            "initial_mean": list(first.mean) if first else []}
        info = self.status_info(store, info, last)
        done = f"{info['seconds']:.1f} s, {'finished' if info['finished'] else 'not finished'}"
        lines = self.status_head(store, info, done)
        start = info["initial_mean"] or info["mean"]
        changes = [m - s for m, s in zip(info["mean"], start)]
        stds, centre = self.describes(cfg)
        lines += weight_lines(info["names"], info["mean"], changes,
                              info["std"] if stds else None, every=every, value_name=centre)
        if "final_check" in info:
            lines.append(info["final_check"]["sentence"])
        return Status(info=info, lines=tuple(lines))

    def plot(self, stores: Sequence[Store], request: ViewRequest) -> list[Path]:
        result = write_plots([load_run(s, out_dir=request.runs_dir) for s in stores],
                             x=request.x, out_dir=request.out, squares=request.squares,
                             progress=request.progress)
        return [p for pair in result.paths.values() for p in pair]

    def report(self, store: Store, request: ViewRequest) -> list[Path]:
        files = write_report(store, out_dir=request.out, runs_dir=request.runs_dir,
                             rule=request.rule, x=request.x, squares=request.squares,
                             progress=request.progress)
        return [files.html, files.markdown]

    def export(self, store: Store, request: ExportRequest) -> Exported:
        fmt, engine, rule, out_file = request.fmt, request.engine, request.rule, request.out_file
        runs_dir = request.runs_dir
        if fmt in NET_FORMATS:
            if engine is not None:
                raise ConfigError(f"--engine maps weights onto another spec; --format {fmt} "
                                  "writes the run's own net: leave --engine out")
            if out_file is None:
                raise ConfigError(f"--format {fmt} writes a net, which is binary; give --out "
                                  "FILE")
            net = export_net(store, fmt=fmt, rule=rule, runs_dir=runs_dir)
            what = f"{fmt}, {len(net.data)} bytes"
            what += f"; {net.net.describe()}" if fmt == "evotune" else ""  # bullet's: no scale
            return Exported(data=net.data, what=what, notes=tuple(net.notes))
        result = export_run(store, fmt=fmt, engine=engine, rule=rule, runs_dir=runs_dir)
        return Exported(data=result.text, notes=tuple(result.notes))

    def verify(self, store: Store, *, settings: Any, runs_dir: str,
               progress: Callable | None) -> dict:
        return verify_run(store, settings=settings, runs_dir=runs_dir, progress=progress)
