"""Progress on stderr, one renderer for every command (:class:`Progress`): on a terminal a bar
with done/total, the rate and the time left, redrawn in place; off a terminal (a file, a pipe,
CI) a plain line now and then (at most every :data:`PLAIN_EVERY` seconds, as fastchess and
cutechess-cli print interim results), never a carriage return; with ``--quiet`` nothing.

The commands' adapters turn the library's events into it: :class:`GameBar` (match, verify),
:class:`CountBar` (datagen, label), :class:`ExperimentBar` (compare, reproduce: their
runs' games and generations, then the verification games) and :func:`steps` (plot, report);
a run's kind turns its own events into it (:class:`CommandUI`, :func:`run_job`: run, resume,
texel, nn train)."""
from __future__ import annotations

import os
import shlex
import shutil
import time
from typing import Self

import click

from ..match.runner import compile_ended
from ..reporting.tables import brief, clock
from ..runs.runkind import Job, RunKind

PLAIN_EVERY = float(os.environ.get("EVOTUNE_PROGRESS_SECONDS") or 30.0)
"""Seconds between two plain progress lines off a terminal (the environment variable
EVOTUNE_PROGRESS_SECONDS sets it; 0: a line at every step)."""
TTY_EVERY = 0.2
"""Seconds between two redraws of the bar on a terminal."""
QUIET = "evotune.quiet"
"""The key of ``--quiet`` in the click context's meta."""


def _set_quiet(ctx: click.Context, param, value: bool) -> None:
    if value:
        ctx.meta[QUIET] = True


quiet_option = click.option("--quiet", "-q", is_flag=True, expose_value=False, is_eager=True,
                            callback=_set_quiet,
                            help="No progress on stderr (results, notes and warnings still "
                                 "print).")
"""--quiet: no progress output (the command's results, notes and warnings are unchanged)."""


def is_quiet() -> bool:
    """True when the running command was given --quiet."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(QUIET))


def info(text: str) -> None:
    """A line of its own on stderr (a command's note: where it keeps its work); nothing with
    --quiet."""
    if not is_quiet():
        click.echo(text, err=True)


def command_line(**options: str) -> str:
    """The running command as it was given (``evotune ...``), with ``options`` added where the
    command line lacks them (``out='F'``: ``--out F``): the line that continues it."""
    ctx = click.get_current_context(silent=True)
    args = list(ctx.find_root().meta.get("evotune.argv", ())) if ctx is not None else []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if not any(a == flag or a.startswith(flag + "=") for a in args):
            args += [flag, value]
    return shlex.join(["evotune", *args])


def _stderr():
    return click.get_text_stream("stderr")


class Progress:
    """One progress display on stderr: :meth:`update` with the work done (and its total), :meth:`
    line` for a line of its own (a generation's summary), :meth:`close` at the end; also a
    context manager. ``rate`` and ``left`` may be given by the caller (a trainer knows its
    own); otherwise they come from the work done since the display began."""

    def __init__(self, label: str, total: int = 0, unit: str = "games") -> None:
        self.label, self.total, self.unit = label, total, unit
        self.stream = _stderr()
        self.quiet = is_quiet()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.monotonic()
        self.shown = self.t0 if not self.tty else None
        self.done = 0
        self.note = ""
        self.drawn = False  # a bar is on the terminal's current line
        self.rate: float | None = None
        self.left: float | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def text(self) -> str:
        """The progress as one line: label, bar (a terminal), done/total, rate, time left."""
        elapsed = time.monotonic() - max(self.t0, compile_ended())  # a compile is not work
        rate = self.rate if self.rate is not None else (self.done / elapsed if elapsed > 0
                                                         else 0.0)
        parts = [self.label]
        if self.total:
            if self.tty:
                fill = int(24 * min(self.done, self.total) / self.total)
                parts.append(f"[{'#' * fill}{'.' * (24 - fill)}]")
            parts.append(f"{self.done:,}/{self.total:,} {self.unit}")
        else:
            parts.append(f"{self.done:,} {self.unit}")
        parts.append(f"{rate:,.1f} {self.unit}/s" if rate < 100 else f"{rate:,.0f} {self.unit}/s")
        left = self.left
        if left is None and self.total and rate > 0:
            left = max(self.total - self.done, 0) / rate
        if left is not None:
            parts.append(f"{clock(left)} left")
        if self.note:
            parts.append(self.note)
        return "  ".join(parts)

    def update(self, done: int, total: int | None = None, *, label: str | None = None,
               note: str | None = None, rate: float | None = None,
               left: float | None = None) -> None:
        """The work done so far (and, when given, the new total, label, note, rate, time left):
        redrawn on a terminal at most every :data:`TTY_EVERY` s; elsewhere a line at most every
        :data:`PLAIN_EVERY` s."""
        self.done = done
        if total is not None:
            self.total = total
        if label is not None:
            self.label = label
        if note is not None:
            self.note = note
        self.rate, self.left = rate, left
        if self.quiet:
            return
        now = time.monotonic()
        if self.tty:
            if self.shown is None or now - self.shown >= TTY_EVERY or done == self.total:
                width = max(20, shutil.get_terminal_size((100, 24)).columns - 1)
                click.echo("\r" + self.text()[:width].ljust(width), nl=False, err=True)
                self.drawn, self.shown = True, now
        elif self.shown is None or now - self.shown >= PLAIN_EVERY:
            click.echo(self.text(), err=True)
            self.shown = now

    def line(self, text: str) -> None:
        """A line of its own (not progress: shown off a terminal too), over the bar on a
        terminal; nothing with --quiet."""
        if self.quiet:
            return
        if self.tty:
            width = max(20, shutil.get_terminal_size((100, 24)).columns - 1)
            click.echo("\r" + text.ljust(width) if self.drawn else text, err=True)
            self.drawn = False
        else:
            click.echo(text, err=True)
            self.shown = time.monotonic()

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.tty and self.drawn and not self.quiet:
            click.echo("", err=True)
        self.drawn = False


class GameBar(Progress):
    """Games of a match or a verification; pass :attr:`callback` as the library's
    ``progress`` (one step per finished game, over however many matches)."""

    def __init__(self, total: int, label: str = "games") -> None:
        super().__init__(label, total, "games")
        self.kept = 0  # games a continued match took from its journal (not played now)

    @property
    def callback(self):
        """One step per finished game; the rate and the time left count only the games played
        by this command (not those a continued match kept, nor a compile's time)."""
        return self._step

    def _step(self, event) -> None:
        self.kept += bool(getattr(event, "stored", False))
        done = self.done + 1
        elapsed = time.monotonic() - max(self.t0, compile_ended())
        rate = (done - self.kept) / elapsed if elapsed > 0 else 0.0
        left = max(self.total - done, 0) / rate if rate > 0 else None
        self.update(done, rate=rate, left=left)


class CountBar(Progress):
    """Work counted in units with a running count of what it made (datagen: games and
    positions; label: positions and scored ones). The library's first call gives where the
    output stood before this command (a rerun continues a file): the rate counts only the work
    of this command, and with ``count_total`` (datagen's --positions) the time left is to
    whichever limit comes first."""

    def __init__(self, label: str, unit: str, count: str = "positions",
                 count_total: int = 0) -> None:
        super().__init__(label, 0, unit)
        self.count, self.count_total = count, count_total
        self.start: tuple[int, int] | None = None

    def __call__(self, done: int, total: int, positions: int) -> None:
        if self.start is None:
            self.start, self.t0 = (done, positions), time.monotonic()
        elapsed = time.monotonic() - self.t0
        rate = (done - self.start[0]) / elapsed if elapsed > 0 else 0.0
        left = None
        if rate > 0:
            left = max(total - done, 0) / rate
            made = positions - self.start[1]
            if self.count_total and made > 0:
                left = min(left, max(self.count_total - positions, 0) * elapsed / made)
        of = f"/{self.count_total:,}" if self.count_total else ""
        self.update(done, total, note=f"{positions:,}{of} {self.count}", rate=rate, left=left)


class ExperimentBar:
    """An experiment's progress (compare, reproduce): the games of each run's generation and a
    line per generation, then the verification games (each a bar of its own)."""

    def __init__(self) -> None:
        self.bar: Progress | None = None
        self.kind = ""
        self.kept = 0  # games of the verification match taken from its journal

    def _bar(self, kind: str, label: str, unit: str = "games") -> Progress:
        if self.bar is None or self.kind != kind:
            if self.bar is not None:
                self.bar.close()
            self.bar, self.kind = Progress(label, 0, unit), kind
        return self.bar

    def __call__(self, ev) -> None:
        if hasattr(ev, "planned"):  # a verification game (match.GameProgress): its match's
            bar = self._bar("verify", "verification")
            if ev.done < bar.done:  # the next match: a rate of its own
                bar.t0, self.kept = time.monotonic(), 0
            self.kept += bool(getattr(ev, "stored", False))  # kept by a stopped verification
            elapsed = time.monotonic() - max(bar.t0, compile_ended())
            rate = (ev.done - self.kept) / elapsed if elapsed > 0 else 0.0
            bar.update(ev.done, ev.planned, rate=rate,
                       left=max(ev.planned - ev.done, 0) / rate if rate > 0 else None)
            return
        bar = self._bar("run", "generation")
        if ev.kind == "game":
            bar.update(ev.games_in_generation, max(ev.games_scheduled, ev.games_in_generation),
                       label=f"  generation {ev.generation}")
            return
        st = ev.stats
        names = st.get("names") or [str(i) for i in range(len(st.get("mean", [])))]
        means = brief(names, st.get("mean", []), lambda n, v: f"{v:.0f}")
        bar.line(f"  generation {ev.generation}  games {ev.games_total:,}  means {means}")
        bar.t0 = time.monotonic()  # each generation's rate of its own
        bar.done = 0

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def steps(label: str, unit: str = "files"):
    """A Progress for work in steps (plot, report: files written) and its callback
    ``(done, total)``."""
    bar = Progress(label, 0, unit)
    return bar, lambda done, total: bar.update(done, total)


class CommandUI:
    """What a run shows while it runs (:class:`evotune.runs.runkind.RunUI`): progress displays
    on stderr (:class:`Progress`) and lines on stderr."""

    def progress(self, label: str, total: int = 0, unit: str = "games") -> Progress:
        return Progress(label, total, unit)

    def info(self, text: str) -> None:
        click.echo(text, err=True)


def run_job(kind: RunKind, job: Job) -> None:
    """Run (or continue) a run of ``kind`` with its progress; print its summary (stdout) and
    notes (stderr)."""
    summary = kind.execute(job, CommandUI())
    for line in summary.lines:
        click.echo(line)
    for note in summary.notes:
        click.echo(note, err=True)
