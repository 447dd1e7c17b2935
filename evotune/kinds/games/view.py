"""The games kind's view: a run's progress and summary lines (a strategy's step, the final
check's verdict, a stored generation's line) and its progress bar while it plays."""
from __future__ import annotations

import math
import time

from ...match.runner import compile_ended
from ...reporting.tables import brief, clock
from ...runs.runkind import Bar
from ...strategies import strategy_class


def step_text(cls, step: dict) -> str:
    """A strategy's step in its own terms ('spsa step: c_k 12.5, R_k 0.0021 (means over the
    weights)'; 'cmaes step: sigma 0.18'); '' when it has none."""
    if not step:
        return ""
    mean = " (means over the weights)" if len(step) > 1 else ""
    return f"{cls.name} step: " + ", ".join(f"{k} {v:.4g}" for k, v in step.items()) + mean


def check_text(check) -> str:
    """The final check's verdict in a few words: 'check H1 +12 +- 9: tuned', 'check H0 -3 +-
    11: start kept'."""
    elo = f" {check.elo:+.0f} +- {check.elo_error:.0f}" if math.isfinite(check.elo) \
        and math.isfinite(check.elo_error) else ""
    return f"check {check.verdict}{elo}: {'tuned' if check.better else 'start kept'}"


def run_line(ev, names, total, centre: str = "mean") -> str:
    """A finished generation as one line: generation g/total, games, rate, the weights' means
    (SPSA: its theta)."""
    st = ev.stats
    means = brief(names, st.get("mean", []))
    if "replacement_rate" in st:
        rate = f"replaced {st['replacement_rate']:.2f}  "
    elif "learning_rate" in st:
        rate = f"lr {st['learning_rate']:.4g}  "
    else:
        rate = ""
    label = "means" if centre == "mean" else centre
    return f"generation {ev.generation}/{total}  games {ev.games_total:,}  {rate}{label} {means}"


class RunBar:
    """A run's progress: the games of the generation being played (a bar, or a line now and
    then) with the run's time left, and one line per stored generation."""

    def __init__(self, cfg, names, bar: Bar) -> None:
        self.cfg, self.names = cfg, names
        self.total = cfg.budget.generations or "-"
        self.bar = bar
        self.t0 = time.monotonic()
        self.start_games: int | None = None  # the run's games when this session began
        self.stored = (0, 0)  # (generation, games) of the last stored generation seen

    def __call__(self, ev) -> None:
        if self.start_games is None:
            self.start_games = ev.games_total - ev.games_in_generation
        elapsed = time.monotonic() - max(self.t0, compile_ended())  # a compile is not work
        rate = (ev.games_total - self.start_games) / elapsed if elapsed > 0 else 0.0
        if ev.kind == "final-check":  # the final check of a run from given weights
            self.bar.update(ev.games_in_generation,
                            max(self.cfg.final_check.games, ev.games_in_generation),
                            label="final check", note="the tuned weights against the start",
                            rate=rate)
            return
        if ev.kind != "game":
            self.stored = (ev.generation, ev.games_total)
            self.bar.line(run_line(ev, self.names, self.total,
                                   strategy_class(self.cfg.strategy).CENTRE))
            return
        self.bar.update(ev.games_in_generation,
                        max(ev.games_scheduled, ev.games_in_generation),
                        label=f"generation {ev.generation}/{self.total}",
                        note=self._run_left(ev.games_total, rate), rate=rate)

    def _run_left(self, games: int, rate: float) -> str:
        """The whole run's time left at ``rate`` games/s: to its --max-games, or its generations
        at the games a stored generation took on average ('' when unknown)."""
        cfg, (generation, stored_games) = self.cfg, self.stored
        if rate <= 0:
            return ""
        if cfg.budget.max_games:
            todo = cfg.budget.max_games - games
        elif cfg.budget.generations and generation > 0:
            todo = round(cfg.budget.generations * stored_games / generation) - games
        else:
            return ""
        return f"run {clock(max(todo, 0) / rate)} left"

    def close(self) -> None:
        self.bar.close()
