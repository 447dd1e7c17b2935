"""Progress on stderr, shared by the commands: a game bar (on a terminal only), a run's status
line, a count bar of games and positions, and one line per generation."""
from __future__ import annotations

import contextlib
import sys

import click

from ..reporting.tables import brief


class GameBar:
    """A click progress bar of ``total`` games on a terminal's stderr (nothing otherwise); use
    it as a context manager and pass :attr:`callback` as the library's ``progress``."""

    def __init__(self, total: int, label: str = "games") -> None:
        self.bar = click.progressbar(length=total, label=label, file=sys.stderr) \
            if sys.stderr.isatty() else None

    def __enter__(self) -> "GameBar":
        (self.bar if self.bar is not None else contextlib.nullcontext()).__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    @property
    def callback(self):
        """One step per finished game (None without a terminal)."""
        return None if self.bar is None else (lambda event: self.bar.update(1))


class RunBar:
    """One status line on stderr: generation, games, replacement rate, weight means."""

    def __init__(self, cfg, names):
        self.cfg, self.names = cfg, names
        self.tty = sys.stderr.isatty()
        self.last = ""

    def __call__(self, ev) -> None:
        total = self.cfg.generations or "?"
        if ev.kind == "guard":
            if self.tty:
                line = (f"final check: the tuned weights against the start, game "
                        f"{ev.games_in_generation} of at most {self.cfg.guard_games}")
                click.echo("\r" + line[:150].ljust(150), nl=False, err=True)
            return
        if ev.kind == "game":
            if not self.tty:
                return
            line = (f"gen {ev.generation}/{total}  games {ev.games_total}  "
                    f"(this generation {ev.games_in_generation})  {self.last}")
            click.echo("\r" + line[:150].ljust(150), nl=False, err=True)
            return
        st = ev.stats
        means = brief(self.names, st.get("mean", []))
        if "replacement_rate" in st:
            rate = f"replaced {st['replacement_rate']:.2f}  "
        elif "learning_rate" in st:
            rate = f"lr {st['learning_rate']:.4g}  "
        else:
            rate = ""
        self.last = f"{rate}means {means}"
        line = f"gen {ev.generation}/{total}  games {ev.games_total}  {self.last}"
        if self.tty:
            click.echo("\r" + line[:150].ljust(150), err=True)
        else:
            click.echo(line, err=True)


class CountBar:
    """A one-line progress bar on stderr: done/total and a count of positions."""

    def __init__(self, label: str, unit: str, count: str = "positions") -> None:
        self.label, self.unit, self.count = label, unit, count
        self.tty = sys.stderr.isatty()
        self.shown = False

    def __call__(self, done: int, total: int, positions: int) -> None:
        width = 30
        fill = int(width * done / max(total, 1))
        line = (f"{self.label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total} {self.unit}, "
                f"{positions} {self.count}")
        click.echo(("\r" + line) if self.tty else line, err=True, nl=not self.tty)
        self.shown = True

    def close(self) -> None:
        if self.tty and self.shown:
            click.echo("", err=True)


def generation_lines(ev) -> None:
    """One stderr line per finished generation of an experiment's runs."""
    if ev.kind != "generation":
        return
    st = ev.stats
    means = brief(st.get("names") or [str(i) for i in range(len(st.get("mean", [])))],
                  st.get("mean", []), lambda n, v: f"{v:.0f}")
    click.echo(f"  gen {ev.generation}  games {ev.games_total}  means {means}", err=True)
