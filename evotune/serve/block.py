"""The final check's result as fastchess prints a match (its results block: Elo, nElo, LOS,
DrawRatio, PairsRatio, Games, Ptnml(0-2), LLR), from guard.json's counts through
:mod:`evotune.match.scoring`'s functions."""
from __future__ import annotations

import math

from ..match.scoring import los, pentanomial_stats, sprt_llr
from ..runs.guard import GUARD_ELO, GUARD_ERRORS, Guard

Z95 = 1.959963984540054


def _nelo(mu: float, var: float) -> float:
    """fastchess's normalised Elo of a mean pair score ``mu`` with pair-score variance ``var``."""
    return (mu - 0.5) / math.sqrt(2.0 * var) * (800.0 / math.log(10.0)) if var > 0 else math.nan


def _num(x: float) -> str:
    return f"{x:.2f}" if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")


def final_check_block(guard: Guard, *, tuned: str = "tuned", start: str = "start") -> list[str]:
    """The block's lines (as fastchess prints them after a match)."""
    penta = [int(c) for c in guard.pentanomial]
    pairs, mu, sigma = pentanomial_stats(penta)
    var = sigma * sigma
    half = Z95 * math.sqrt(var / pairs) if pairs else math.nan
    elo = guard.elo if guard.games else 0.0
    err = guard.elo_error if guard.games else math.nan
    nelo = _nelo(mu, var)
    nerr = ((_nelo(mu + half, var) - _nelo(mu - half, var)) / 2.0 if pairs and var > 0
            else math.nan)
    alpha, beta = GUARD_ERRORS
    lower, upper = math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
    llr = sprt_llr(penta, *GUARD_ELO)
    points = guard.wins + guard.draws / 2
    share = 100.0 * points / guard.games if guard.games else 0.0
    draws_pairs = penta[2] if len(penta) == 5 else 0
    losing = penta[0] + penta[1]
    winning = penta[3] + penta[4]
    pairs_ratio = winning / losing if losing else math.inf if winning else math.nan
    where = f", {guard.openings}" if guard.openings else ""
    if not guard.games:
        return [f"Results of {tuned} vs {start} (final check{where}):",
                "no games: the tuned weights equal the start"]
    return [
        f"Results of {tuned} vs {start} (final check{where}):",
        f"Elo: {_num(elo)} +/- {_num(err)}, nElo: {_num(nelo)} +/- {_num(nerr)}",
        f"LOS: {100.0 * los(guard.wins, guard.losses):.2f} %, DrawRatio: "
        f"{100.0 * draws_pairs / pairs if pairs else 0.0:.2f} %, PairsRatio: {_num(pairs_ratio)}",
        f"Games: {guard.games}, Wins: {guard.wins}, Losses: {guard.losses}, Draws: "
        f"{guard.draws}, Points: {points:.1f} ({share:.2f} %)",
        f"Ptnml(0-2): [{', '.join(str(c) for c in penta)}]",
        f"LLR: {llr:.2f} ({lower:.2f}, {upper:.2f}) [{GUARD_ELO[0]:.2f}, {GUARD_ELO[1]:.2f}]",
        f"verdict: {guard.verdict}" + (" (the run recommends the tuned weights)" if guard.better
                                       else " (the run recommends its start)"),
    ]

