"""The toy kind: counts to its config's steps, one step per resume, in toy.json."""
from __future__ import annotations

from pathlib import Path

from evotune.errors import ConfigError
from evotune.runs.registry import StoredKind
from evotune.runs.rundata import Recommendation
from evotune.runs.runkind import (
    Exported,
    ExportRequest,
    Job,
    ResumeRequest,
    Status,
    Summary,
    ViewRequest,
)
from evotune.runs.store import Store

from .config import ToyConfig, read_toy


class ToyKind:
    """Counts to its config's steps, one step per resume, in toy.json."""

    name = "toy"
    stored = StoredKind("toy", read_toy)
    reads: frozenset[str] = frozenset()
    overlays = False
    config_class = ToyConfig

    def new(self, config, *, out_dir, run_id, workers, ui, **start) -> Job:
        store = Store.create(out_dir, run_id or "toy", config=config, identity={})
        store.unlock()
        return Job(store=store, plan=config)

    def resume(self, store, request: ResumeRequest) -> Job:
        return Job(store=store, plan=store.manifest().config)

    def execute(self, job: Job, ui) -> Summary:
        done = (job.store.read_document("toy") or {"done": 0})["done"] + 1
        job.store.write_document("toy", {"done": done})
        return Summary(run_id=job.store.run_id,
                       lines=(f"toy {job.store.run_id}: step {done}/{job.plan.steps}",))

    def status(self, store, *, every: bool) -> Status:
        done = (store.read_document("toy") or {"done": 0})["done"]
        steps = store.manifest().config.steps
        return Status(info={"run_id": store.run_id, "kind": self.name, "done": done},
                      lines=(f"toy {store.run_id}: counted {done} of {steps}",))

    def row(self, store) -> tuple[str, ...]:
        done = (store.read_document("toy") or {"done": 0})["done"]
        return (store.run_id, "count", f"step {done}/{store.manifest().config.steps}", "-",
                "-", "stopped", "now")

    def plot(self, stores, request: ViewRequest) -> list[Path]:
        raise ConfigError("a toy has no plots")

    def report(self, store, request: ViewRequest) -> list[Path]:
        raise ConfigError("a toy has no report")

    def export(self, store, request: ExportRequest) -> Exported:
        raise ConfigError("a toy exports nothing")

    def verify(self, store, *, settings, runs_dir, progress) -> dict:
        raise ConfigError("a toy plays no games")

    def recommend(self, run, rule) -> Recommendation:
        raise ConfigError("a toy recommends nothing")


TOY = ToyKind()
"""The toy kind (a test registers it with one line)."""
