"""The results block as fastchess prints it (and engine developers paste from OpenBench tests):
its figures (:class:`BlockFigures`) and its lines (:func:`block_lines`).

A block, for a match of A against B (A's view)::

    --------------------------------------------------
    Results of A vs B (10+0.1, 8moves_v3.pgn):
    Elo: 12.34 +/- 5.67, nElo: 20.12 +/- 9.80
    LOS: 99.99 %, DrawRatio: 42.00 %, PairsRatio: 1.25
    Games: 800, Wins: 250, Losses: 222, Draws: 328, Points: 414.0 (51.75 %)
    Ptnml(0-2): [12, 80, 168, 120, 20]
    LLR: 2.95 (100.2%) (-2.94, 2.94) [0.00, 5.00]
    --------------------------------------------------

The figures are fastchess's (its ``--report penta`` model when the match has complete pairs,
the per-game one otherwise), from :mod:`evotune.match.scoring`'s functions: Elo and its 95% error
from the model's score and variance, nElo (normalised Elo), LOS by the normal approximation on
the model's variance, the draw ratio (pentanomial: the share of pairs scoring 1-1, WL and DD; per
game: draws over games), the pairs ratio (pairs won, WW + WD, over pairs lost, LD + LL), the
points (W + D/2) and their share, and with an SPRT the LLR, its share of the bound on its side,
the bounds and the hypotheses. A figure that has no value (no games, no spread, no lost pair)
reads 'n/a' (None in JSON), an infinite one 'inf'. fastchess's 'WL/DD Ratio' is left out: evotune's
pentanomial counts, like fishtest's, hold WL and DD pairs together. Pure functions: the CLI
prints the lines, the library returns them.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..limits import Limits
from .scoring import (
    NO_INFORMATION,
    MatchResult,
    SprtResult,
    elo_error,
    elo_from_score,
    llr_fraction,
    los_normal,
    nelo,
    pentanomial_stats,
    summary_dict,
    trinomial_sigma,
    uninformative,
)

RULE = "-" * 50
"""The line above and below a block."""


@dataclass(frozen=True)
class BlockFigures:
    """A match's figures as the fastchess block shows them (A's view)."""

    model: str
    """'pentanomial' (the match has complete pairs) or 'trinomial' (per game)."""
    games: int
    """Games played."""
    wins: int
    """Games A won."""
    losses: int
    """Games A lost."""
    draws: int
    """Drawn games."""
    pentanomial: tuple[int, int, int, int, int]
    """Complete pairs by A's pair points 0..4 (LL, LD, WL+DD, WD, WW)."""
    elo: float | None
    """Logistic Elo of the model's score (+-inf: every point to one side; None: no games)."""
    elo_error: float | None
    """Its 95% error (inf: no finite interval; None: no games)."""
    nelo: float | None
    """Normalised Elo (None: no games or no spread)."""
    nelo_error: float | None
    """Its 95% error (None with it)."""
    los: float | None
    """Likelihood of superiority of A, 0..1, on the model's variance (None: no games)."""
    draw_ratio: float | None
    """Share of drawn pairs (1-1) or of drawn games, 0..1 (None: none played)."""
    pairs_ratio: float | None
    """Pairs A won over pairs A lost (inf: none lost; None: no pair won or lost)."""
    points: float
    """W + D/2."""
    points_ratio: float | None
    """Points over games, 0..1 (None: no games)."""
    sprt: SprtResult | None
    """The SPRT's state (its LLR from the same counts), when the match ran one."""
    llr_fraction: float | None
    """LLR over the bound on its side (1.0: H1 reached, -1.0: H0 reached; None: no SPRT)."""

    def to_dict(self) -> dict:
        """JSON-safe (non-finite numbers become null): the ``block`` of ``--json``."""
        d = {k: _json(v) for k, v in asdict(self).items() if k not in ("sprt", "pentanomial")}
        d["pentanomial"] = list(self.pentanomial)
        d["llr_percent"] = None if self.llr_fraction is None else 100.0 * self.llr_fraction
        return d


def _json(v):
    return None if isinstance(v, float) and not math.isfinite(v) else v


def block_figures(*, wins: int, draws: int, losses: int, pentanomial: Sequence[int],
                  sprt: SprtResult | None = None) -> BlockFigures:
    """The block's figures from a match's counts (a :class:`MatchResult`, a stored match, a
    final check's record)."""
    penta = tuple(int(c) for c in pentanomial)
    if len(penta) != 5:
        raise ValueError(f"pentanomial counts must be five, got {penta!r}")
    games = wins + draws + losses
    pairs, mu, sigma_pair = pentanomial_stats(penta)
    drawn: float | None
    if pairs:
        model, s, sigma, n = "pentanomial", mu, sigma_pair, pairs
        drawn = penta[2] / pairs
    else:
        model, n = "trinomial", games
        s = (wins + 0.5 * draws) / games if games else 0.5
        sigma = trinomial_sigma(wins, draws, losses)
        drawn = draws / games if games else None
    won, lost = penta[3] + penta[4], penta[0] + penta[1]
    ne, ne_err = nelo(s, sigma, n, pairs=bool(pairs))
    return BlockFigures(
        model=model, games=games, wins=wins, losses=losses, draws=draws,
        pentanomial=penta,
        elo=elo_from_score(s) if games else None,
        elo_error=elo_error(s, sigma, n) if games else None,
        nelo=ne, nelo_error=ne_err, los=los_normal(s, sigma, n) if games else None,
        draw_ratio=drawn, pairs_ratio=won / lost if lost else (math.inf if won else None),
        points=wins + 0.5 * draws, points_ratio=(wins + 0.5 * draws) / games if games else None,
        sprt=sprt,
        llr_fraction=None if sprt is None else llr_fraction(sprt.llr, sprt.lower, sprt.upper))


def result_figures(result: MatchResult) -> BlockFigures:
    """The block's figures of a played match."""
    return block_figures(wins=result.wins, draws=result.draws, losses=result.losses,
                         pentanomial=result.pentanomial, sprt=result.sprt)


def stored_figures(m: dict) -> BlockFigures:
    """The block's figures of a stored match (``MatchResult.to_dict()``, e.g. verify.json's)."""
    sp = m.get("sprt")
    state = None if not sp else SprtResult(
        llr=float(sp["llr"]), lower=float(sp["lower"]), upper=float(sp["upper"]),
        verdict=sp.get("verdict"), elo0=float(sp["elo0"]), elo1=float(sp["elo1"]))
    return block_figures(wins=int(m["wins"]), draws=int(m["draws"]), losses=int(m["losses"]),
                         pentanomial=m.get("pentanomial") or (0, 0, 0, 0, 0), sprt=state)


def limits_text(limits: Limits) -> str:
    """The limits as fastchess names them in a block's first line: a clock '10+0.1', a time per
    move '0.1/move', a depth '3 plies', a node limit '1000 nodes'."""
    return limit_words(depth=limits.depth, nodes=limits.nodes, movetime=limits.movetime,
                       tc="" if limits.tc is None else str(limits.tc))


def limit_words(*, depth: int = 0, nodes: int = 0, movetime: float = 0.0, tc: str = "") -> str:
    """:func:`limits_text` of the limits' values (a stored document's)."""
    if tc:
        return tc
    parts = []
    if movetime > 0:
        parts.append(f"{movetime:.8g}/move")
    elif depth:
        parts.append(f"{depth} plies")
    if nodes:
        parts.append(f"{nodes} nodes")
    return ", ".join(parts)


def conditions(limits: Limits | None, openings: str | Path | None) -> str:
    """'3 plies, 2moves': the limits and the openings' file name ('' for neither)."""
    parts = [limits_text(limits)] if limits is not None else []
    if openings:
        parts.append(Path(str(openings)).name)
    return ", ".join(p for p in parts if p)


def _fixed(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _percent(x: float | None) -> str:
    return "n/a" if x is None else f"{100.0 * x:.2f} %"


def _pm(x: float | None, err: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f} +/- {_fixed(err)}"


def block_lines(fig: BlockFigures, first: str = "A", second: str = "B", *,
                where: str = "") -> list[str]:
    """The block's lines, rules included (``where``: the limits and openings, :func:`conditions`)."""
    head = f"Results of {first} vs {second}" + (f" ({where})" if where else "") + ":"
    lines = [RULE, head,
             f"Elo: {_pm(fig.elo, fig.elo_error)}, nElo: {_pm(fig.nelo, fig.nelo_error)}",
             f"LOS: {_percent(fig.los)}, DrawRatio: {_percent(fig.draw_ratio)}, "
             f"PairsRatio: {_fixed(fig.pairs_ratio)}",
             f"Games: {fig.games}, Wins: {fig.wins}, Losses: {fig.losses}, Draws: {fig.draws}, "
             f"Points: {fig.points:.1f} ({_percent(fig.points_ratio)})",
             f"Ptnml(0-2): [{', '.join(str(c) for c in fig.pentanomial)}]"]
    if fig.sprt is not None:
        s = fig.sprt
        lines.append(f"LLR: {s.llr:.2f} ({100.0 * (fig.llr_fraction or 0.0):.1f}%) "
                     f"({s.lower:.2f}, {s.upper:.2f}) [{s.elo0:.2f}, {s.elo1:.2f}]")
    return lines + [RULE]


def verdict_line(state: SprtResult, games: int) -> str:
    """'SPRT [0, 5]: H1 accepted (Elo >= 5) after 120 games', or 'no verdict after N games'."""
    test = f"SPRT [{state.elo0:g}, {state.elo1:g}]"
    if state.verdict == "H1":
        return f"{test}: H1 accepted (Elo >= {state.elo1:g}) after {games} games"
    if state.verdict == "H0":
        return f"{test}: H0 accepted (Elo <= {state.elo0:g}) after {games} games"
    return f"{test}: no verdict after {games} games"


def summary_lines(fig: BlockFigures, first: str = "A", second: str = "B", *,
                  where: str = "") -> list[str]:
    """The block, then what it does not say: a match whose pairs all scored 1-1 carries no
    information, and an SPRT's verdict."""
    lines = block_lines(fig, first, second, where=where)
    if uninformative(fig.pentanomial):
        lines.append(NO_INFORMATION)
    if fig.sprt is not None:
        lines.append(verdict_line(fig.sprt, fig.games))
    return lines


def json_summary(result: MatchResult) -> dict:
    """``evotune match --json``: the summary's keys (:data:`~.scoring.SUMMARY_KEYS`) and
    ``block``, the block's figures (:meth:`BlockFigures.to_dict`)."""
    return {**summary_dict(result), "block": result_figures(result).to_dict()}
