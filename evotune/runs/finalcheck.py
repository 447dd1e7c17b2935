"""final-check.json: the final check of a run that starts from given weights, and its one
validator (runs made before round 5 named it guard.json: still read).

A games run whose strategy starts from given weights (a run from earlier weights, a net's
output layer, a UCI engine's defaults, ``init = "reference"``) ends by playing what it would
recommend (the tuned weights) against that start: a GSPRT [0, 5] on pentanomial pairs, capped at
the run's ``final_check_games`` (part of its games budget), on the openings of its
``final_check_openings`` (by default held-out ones, which the run does not tune on). The run
recommends the tuned weights only when they are better: the test accepted H1, or it ended
undecided with the tuned weights ahead (Elo above 0). Otherwise it recommends its start, and
``status``, ``export`` and the run's last line say so in one sentence
(:attr:`FinalCheck.sentence`), with the evidence beside it. The games are played by
:mod:`evotune.kinds.games.finalmatch`; this module holds the record.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from ..limits import Limits
from ..match.resultsblock import block_figures, conditions, summary_lines
from ..match.scoring import SprtParams, sprt
from .recordio import damaged, float_field, int_field, json_object, vector_field

FINAL_CHECK_DOCUMENT = "final-check"
"""The record's name in the run folder (final-check.json)."""
FINAL_CHECK_PGN = "final-check.pgn"
"""The final check's games in PGN."""
OLD_FINAL_CHECK_DOCUMENT, OLD_FINAL_CHECK_PGN = "guard", "guard.pgn"
"""Their old names, in runs made before round 5 (read, never written)."""
FINAL_CHECK_ELO = (0.0, 5.0)
"""The final check's SPRT hypotheses: H0 elo <= 0, H1 elo >= 5 (as ``evotune verify``'s)."""
FINAL_CHECK_ERRORS = (0.05, 0.05)
"""Its alpha and beta."""
VERDICTS = ("H1", "H0", "undecided", "same")


@dataclass(frozen=True)
class FinalCheck:
    """The final check: the tuned weights against the start."""

    generation: int
    """The generation whose recommendation was checked."""
    tuned: tuple[float, ...]
    """The weights the strategy recommends after it (rounded)."""
    start: tuple[float, ...]
    """The start: the weight space's reference values (the given weights)."""
    games: int
    """Games played (0 when the tuned weights equal the start)."""
    wins: int
    """Games the tuned weights won."""
    draws: int
    """Drawn games."""
    losses: int
    """Games the tuned weights lost."""
    pentanomial: tuple[int, ...]
    """Complete pairs by the tuned side's pair points 0..4."""
    elo: float
    """Elo of the tuned weights over the start (0 when no game was played)."""
    elo_error: float
    """Its 95% error bar (pentanomial; 0 when no game was played)."""
    verdict: str
    """'H1', 'H0', 'undecided' (the cap reached first) or 'same' (nothing to play)."""
    better: bool
    """True when the run recommends the tuned weights: H1, or undecided with Elo above 0."""
    openings: str = ""
    """The openings the check played (a file's name, 'startpos'; '' in records written before
    the check's openings were a setting: the run's own)."""

    @property
    def recommended(self) -> tuple[float, ...]:
        """What the run recommends: the tuned weights when better, else the start."""
        return self.tuned if self.better else self.start

    @property
    def evidence(self) -> str:
        """The check's figures in a few words."""
        if self.verdict == "same":
            return "the tuned weights equal the start"
        test = "SPRT [0, 5] " + (self.verdict if self.verdict != "undecided" else "undecided")
        record = f"{self.wins}-{self.draws}-{self.losses}"
        if self.games and (self.wins == self.games or self.losses == self.games):
            # every point to one side: the Elo is infinite (stored capped), so say what happened
            side = "won" if self.wins == self.games else "lost"
            return (f"the tuned weights {side} all {self.games} games ({record}{self._where}), "
                    f"{test}")
        return (f"{self.elo:+.1f} +- {self.elo_error:.1f} Elo over {self.games} games "
                f"({record}{self._where}), {test}")

    @property
    def _where(self) -> str:
        return f", openings {self.openings}" if self.openings else ""

    @property
    def sentence(self) -> str:
        """One sentence for status, export and the run's last line."""
        if self.verdict == "same":
            return "Final check: the tuned weights equal the start; the run recommends its start."
        if self.better and self.verdict == "H1":
            return (f"Final check: the tuned weights are better than the start "
                    f"({self.evidence}); the run recommends them.")
        if self.better:
            return (f"Final check: the tuned weights scored ahead of the start without a "
                    f"verdict ({self.evidence}); the run recommends them.")
        return (f"Final check: the tuned weights were not better than the start "
                f"({self.evidence}); the run recommends its start (the tuned weights are in "
                f"{FINAL_CHECK_DOCUMENT}.json).")

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(tuned=list(self.tuned), start=list(self.start),
                 pentanomial=list(self.pentanomial))
        return d


def _signed(d: dict, key: str, path: Path) -> float:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise damaged(path, f"'{key}' must be a finite number, not {v!r}")
    return float(v)


def parse_final_check(data, path: Path, n: int | None = None) -> FinalCheck:
    """The one validator of final-check.json (and of guard.json, its old name; ``n``: the run's
    number of weights, when known)."""
    d = json_object(data, path)
    verdict, better, openings = d.get("verdict"), d.get("better"), d.get("openings", "")
    if not isinstance(openings, str):
        raise damaged(path, f"'openings' must be text, not {openings!r}")
    if verdict not in VERDICTS:
        raise damaged(path, f"'verdict' must be one of {', '.join(VERDICTS)}, not {verdict!r}")
    if not isinstance(better, bool):
        raise damaged(path, f"'better' must be true or false, not {better!r}")
    penta = d.get("pentanomial")
    if not (isinstance(penta, list) and len(penta) == 5
            and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in penta)):
        raise damaged(path, "'pentanomial' must be five counts")
    tuned = vector_field(d.get("tuned"), n, "tuned", path)
    start = vector_field(d.get("start"), len(tuned), "start", path)
    g = FinalCheck(generation=int_field(d, "generation", path), tuned=tuned, start=start,
                   games=int_field(d, "games", path), wins=int_field(d, "wins", path),
                   draws=int_field(d, "draws", path), losses=int_field(d, "losses", path),
                   pentanomial=tuple(penta), elo=_signed(d, "elo", path),
                   elo_error=float_field(d, "elo_error", path), verdict=verdict, better=better,
                   openings=openings)
    if g.wins + g.draws + g.losses != g.games or not (math.isfinite(g.elo)
                                                      and math.isfinite(g.elo_error)):
        raise damaged(path, "the games do not add up, or the Elo is not finite")
    return g


def final_check_block(check: FinalCheck, limits: Limits | None = None) -> list[str]:
    """The final check's results block (the tuned weights against the start), from its record;
    none when nothing was played (the tuned weights equal the start)."""
    if check.games == 0:
        return []
    state = sprt(check.pentanomial, SprtParams(*FINAL_CHECK_ELO, *FINAL_CHECK_ERRORS))
    fig = block_figures(wins=check.wins, draws=check.draws, losses=check.losses,
                        pentanomial=check.pentanomial, sprt=state)
    return summary_lines(fig, "tuned", "start",
                         where=conditions(limits, check.openings or None))
