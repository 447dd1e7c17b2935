"""The fastchess results block: golden figures worked out by hand (and checked with scipy when
it is installed), the block's lines, and its edge cases (all wins, all draws, no games)."""
from __future__ import annotations

import math

import pytest

from evotune.limits import Limits, parse_tc
from evotune.match.resultsblock import (
    RULE,
    block_figures,
    block_lines,
    conditions,
    limits_text,
    stored_figures,
)
from evotune.match.scoring import SprtParams, nelo, sprt

PENTA = (12, 80, 168, 120, 20)


def test_pentanomial_figures_by_hand():
    # 400 pairs: mu = (80 .25 + 168 .5 + 120 .75 + 20) / 400 = 214 / 400 = 0.535
    # var = (12 .535^2 + 80 .285^2 + 168 .035^2 + 120 .215^2 + 20 .465^2) / 400
    #     = (3.4347 + 6.498 + 0.2058 + 5.547 + 4.3245) / 400 = 20.01 / 400 = 0.050025
    # nElo = .035 / sqrt(2 * .050025) * 800 / ln 10 = .035 / .3163068 * 347.4355 = 38.4445
    # nElo error = 1.959964 * 347.4355 / sqrt(800) = 24.0756
    # LOS = Phi(.035 * sqrt(400) / sqrt(.050025)) = Phi(3.12967) = 0.999125
    # LLR (fishtest): s1 = L(5) = 0.5071955; 400 (.0071955) (1.07 - 1.0071955) / (2 .050025)
    #     = 1.80664; its share of the upper bound ln(.95/.05) = 2.944439: 61.36 %
    fig = block_figures(wins=250, draws=328, losses=222, pentanomial=PENTA,
                        sprt=sprt(PENTA, SprtParams(0.0, 5.0)))
    assert fig.model == "pentanomial" and fig.games == 800
    assert fig.elo == pytest.approx(-400 * math.log10(1 / 0.535 - 1), abs=1e-9)  # 24.3624
    assert fig.nelo == pytest.approx(38.44446275, abs=1e-6)
    assert fig.nelo_error == pytest.approx(24.07561533, abs=1e-6)
    assert fig.los == pytest.approx(0.99912511, abs=1e-7)
    assert fig.draw_ratio == pytest.approx(168 / 400)
    assert fig.pairs_ratio == pytest.approx(140 / 92)  # (WD + WW) / (LL + LD) = 1.5217
    assert fig.points == 414.0 and fig.points_ratio == pytest.approx(0.5175)
    assert fig.sprt.llr == pytest.approx(1.80664275, abs=1e-6)
    assert fig.llr_fraction == pytest.approx(1.80664275 / math.log(19), abs=1e-7)
    assert block_lines(fig, "new", "base", where="3 plies, 2moves") == [
        RULE,
        "Results of new vs base (3 plies, 2moves):",
        "Elo: 24.36 +/- 15.32, nElo: 38.44 +/- 24.08",
        "LOS: 99.91 %, DrawRatio: 42.00 %, PairsRatio: 1.52",
        "Games: 800, Wins: 250, Losses: 222, Draws: 328, Points: 414.0 (51.75 %)",
        "Ptnml(0-2): [12, 80, 168, 120, 20]",
        "LLR: 1.81 (61.4%) (-2.94, 2.94) [0.00, 5.00]",
        RULE,
    ]


def test_figures_agree_with_scipy():
    stats = pytest.importorskip("scipy.stats", reason="scipy is an optional cross-check")
    fig = block_figures(wins=250, draws=328, losses=222, pentanomial=PENTA)
    x = [0, 0.25, 0.5, 0.75, 1.0]
    dist = stats.rv_discrete(values=(range(5), [c / 400 for c in PENTA]))
    mu = sum(p * v for p, v in zip(dist.pk, x))
    var = sum(p * (v - mu) ** 2 for p, v in zip(dist.pk, x))
    assert fig.los == pytest.approx(stats.norm.cdf((mu - 0.5) / math.sqrt(var / 400)), abs=1e-12)
    assert fig.nelo == pytest.approx((mu - 0.5) / math.sqrt(2 * var) * 800 / math.log(10))
    lo, hi = stats.norm.interval(0.95, loc=mu, scale=math.sqrt(var / 400))
    elo = lambda s: -400 * math.log10(1 / s - 1)  # noqa: E731
    assert fig.elo_error == pytest.approx((elo(hi) - elo(lo)) / 2, abs=1e-9)


def test_trinomial_figures_without_pairs():
    # W=6 D=3 L=1, no complete pair: s = .75, var = .1125 (see test_scoring)
    # nElo = .25 / sqrt(.1125) * 347.4355 = 258.9632, error 1.959964 * 347.4355 / sqrt(10) = 215.3388
    # LOS = Phi(.25 sqrt(10) / sqrt(.1125)) = Phi(2.357023) = 0.990789
    fig = block_figures(wins=6, draws=3, losses=1, pentanomial=(0, 0, 0, 0, 0))
    assert fig.model == "trinomial"
    assert (fig.nelo, fig.nelo_error) == (pytest.approx(258.96319568, abs=1e-6),
                                          pytest.approx(215.33884995, abs=1e-6))
    assert fig.los == pytest.approx(0.99078894, abs=1e-7)
    assert fig.draw_ratio == pytest.approx(0.3) and fig.pairs_ratio is None
    assert block_lines(fig)[3] == "LOS: 99.08 %, DrawRatio: 30.00 %, PairsRatio: n/a"


def test_all_wins_all_draws_and_no_games():
    wins = block_figures(wins=4, draws=0, losses=0, pentanomial=(0, 0, 0, 0, 2))
    assert wins.elo == math.inf and wins.elo_error == math.inf and wins.nelo is None
    assert wins.los == 1.0 and wins.pairs_ratio == math.inf and wins.draw_ratio == 0.0
    assert block_lines(wins)[2:4] == ["Elo: inf +/- inf, nElo: n/a",
                                      "LOS: 100.00 %, DrawRatio: 0.00 %, PairsRatio: inf"]
    assert wins.to_dict()["elo"] is None and wins.to_dict()["pairs_ratio"] is None
    draws = block_figures(wins=0, draws=4, losses=0, pentanomial=(0, 0, 2, 0, 0))
    assert (draws.elo, draws.elo_error, draws.nelo, draws.los) == (0.0, math.inf, None, 0.5)
    assert block_lines(draws)[2:4] == ["Elo: 0.00 +/- inf, nElo: n/a",
                                       "LOS: 50.00 %, DrawRatio: 100.00 %, PairsRatio: n/a"]
    none = block_figures(wins=0, draws=0, losses=0, pentanomial=(0, 0, 0, 0, 0))
    assert block_lines(none)[2:6] == [
        "Elo: n/a, nElo: n/a", "LOS: n/a, DrawRatio: n/a, PairsRatio: n/a",
        "Games: 0, Wins: 0, Losses: 0, Draws: 0, Points: 0.0 (n/a)", "Ptnml(0-2): [0, 0, 0, 0, 0]"]
    assert nelo(0.5, 0.0, 10, pairs=True) == (None, None)


def test_llr_percent_below_zero_and_stored_match():
    # every pair lost: the LLR runs towards H0; its percentage is signed (-100 % at the bound)
    penta = (6, 0, 0, 0, 0)
    fig = block_figures(wins=0, draws=0, losses=12, pentanomial=penta,
                        sprt=sprt(penta, SprtParams(0.0, 5.0)))
    assert fig.sprt.llr < 0 and fig.llr_fraction == pytest.approx(fig.sprt.llr / math.log(19))
    stored = {"wins": 0, "draws": 0, "losses": 12, "pentanomial": list(penta),
              "sprt": fig.sprt.to_dict()}
    assert block_lines(stored_figures(stored)) == block_lines(fig)
    assert fig.to_dict()["llr_percent"] == pytest.approx(100 * fig.llr_fraction)


def test_conditions_as_fastchess_names_them():
    assert limits_text(Limits(depth=3)) == "3 plies"
    assert limits_text(Limits(depth=3, nodes=1000)) == "3 plies, 1000 nodes"
    assert limits_text(Limits(depth=3, movetime=0.1)) == "0.1/move"
    assert limits_text(Limits(depth=3, tc=parse_tc("10+0.1"))) == "10+0.1"
    assert conditions(Limits(depth=2), "/x/8moves_v3.pgn") == "2 plies, 8moves_v3.pgn"
    assert conditions(None, None) == ""


def test_final_check_block_from_its_record():
    from evotune.runs.finalcheck import FinalCheck, final_check_block

    penta = (1, 2, 3, 3, 1)  # 10 pairs of the 20 games
    check = FinalCheck(generation=4, tuned=(1.0,), start=(0.0,), games=20, wins=8, draws=5,
                       losses=7, pentanomial=penta, elo=17.4, elo_error=90.0,
                       verdict="undecided", better=True, openings="8moves_v3.pgn")
    lines = final_check_block(check, Limits(depth=3))
    fig = block_figures(wins=8, draws=5, losses=7, pentanomial=penta,
                        sprt=sprt(penta, SprtParams(0.0, 5.0)))
    assert lines[:8] == block_lines(fig, "tuned", "start", where="3 plies, 8moves_v3.pgn")
    assert lines[-1] == "SPRT [0, 5]: no verdict after 20 games"
    same = FinalCheck(generation=4, tuned=(0.0,), start=(0.0,), games=0, wins=0, draws=0,
                      losses=0, pentanomial=(0, 0, 0, 0, 0), elo=0.0, elo_error=0.0,
                      verdict="same", better=False)
    assert final_check_block(same) == []
