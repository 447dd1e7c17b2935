"""Golden statistics for evotune.match.scoring, with the arithmetic worked out in comments."""
from __future__ import annotations

import math

import pytest

from evotune.errors import ConfigError
from evotune.match.gamerecord import GameRecord
from evotune.match.openings import Opening
from evotune.match.scoring import (
    SprtParams,
    elo_error,
    elo_from_score,
    los,
    match_result,
    pentanomial_from_records,
    pentanomial_stats,
    sprt,
    sprt_llr,
    trinomial_sigma,
)

Z = 1.959963984540054


def rec(game: int, result: str, pair: int | None = None) -> GameRecord:
    return GameRecord(key=(0, 0, game // 2 if pair is None else pair, game), white_name="w",
                      black_name="b", white_weights=(), black_weights=(), opening=Opening(),
                      moves=(), result=result, termination="checkmate")


def test_elo_of_score():
    # s = 0.75: 1/s - 1 = 1/3, log10(1/3) = -0.47712125472, * -400 = 190.8485018879
    assert elo_from_score(0.75) == pytest.approx(190.848501887865, abs=1e-9)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.25) == pytest.approx(-190.848501887865, abs=1e-9)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


def test_trinomial_error_w6_d3_l1():
    # W=6 D=3 L=1, N=10: s = (6 + 1.5)/10 = 0.75
    # var = (6 (1-.75)^2 + 3 (.5-.75)^2 + 1 (0-.75)^2)/10 = (0.375 + 0.1875 + 0.5625)/10 = 0.1125
    sigma = trinomial_sigma(6, 3, 1)
    assert sigma == pytest.approx(math.sqrt(0.1125), abs=1e-12)  # 0.33541019662
    # d = 1.95996 * 0.33541 / sqrt(10) = 0.2078855737
    # Elo(0.9578855737) = -400 log10(1/0.9578855737 - 1) = -400 log10(0.0439662) = 542.7530973
    # Elo(0.5421144263) = -400 log10(0.8446...) = 29.3336016
    # (542.7530973 - 29.3336016) / 2 = 256.7097479
    assert elo_error(0.75, sigma, 10) == pytest.approx(256.7097478509694, abs=1e-6)
    # LOS = 0.5 (1 + erf(5 / sqrt(14))) = 0.5 (1 + erf(1.3363062)) = 0.9706091
    assert los(6, 1) == pytest.approx(0.9706091393223206, abs=1e-12)
    assert los(0, 0) == 0.5


def test_pentanomial_error():
    # counts (1, 2, 3, 3, 1), 10 pairs, pair scores 0, .25, .5, .75, 1:
    # mu = (0 + .5 + 1.5 + 2.25 + 1)/10 = 0.525
    # var = (1 .525^2 + 2 .275^2 + 3 .025^2 + 3 .225^2 + 1 .475^2)/10
    #     = (.275625 + .15125 + .001875 + .151875 + .225625)/10 = 0.080625
    n, mu, sigma = pentanomial_stats((1, 2, 3, 3, 1))
    assert (n, mu) == (10, pytest.approx(0.525)) and sigma ** 2 == pytest.approx(0.080625)
    # d = 1.95996 sqrt(.080625)/sqrt(10) = 0.175987959; Elo(0.700988) = 148.0087523,
    # Elo(0.349012) = -108.2930182; half the difference = 128.1508852
    assert elo_error(mu, sigma, n) == pytest.approx(128.15088524572474, abs=1e-6)


def test_error_is_inf_when_interval_leaves_unit_range():
    # 2 wins out of 2: s = 1, the interval touches 1 -> no finite bar
    assert elo_error(1.0, 0.0, 2) == math.inf
    # W=3 L=1: s = .75, sigma = sqrt(.1875) = .4330, d = 1.96 * .433 / 2 = .4243 -> s + d > 1
    assert elo_error(0.75, trinomial_sigma(3, 0, 1), 4) == math.inf


def test_sprt_llr_fishtest_formula():
    # counts (5, 10, 20, 15, 10), N = 60: mu = (2.5 + 10 + 11.25 + 10)/60 = 0.5625
    # var = (5 .5625^2 + 10 .3125^2 + 20 .0625^2 + 15 .1875^2 + 10 .4375^2)/60
    #     = (1.58203125 + .9765625 + .078125 + .52734375 + 1.9140625)/60 = 0.0846354167
    # s0 = L(0) = .5; s1 = L(10) = 1/(1 + 10^-.025) = 0.5143871842
    # LLR = 60 (s1 - s0)(2 mu - s0 - s1)/(2 var) = 60 * .0143871842 * .0481128158 / .1692708333
    #     = 0.5640925567
    assert sprt_llr((5, 10, 20, 15, 10), 0, 10) == pytest.approx(0.5640925567098594, abs=1e-9)
    p = SprtParams(0, 10, 0.05, 0.05)
    # bounds ln(.05/.95) = -2.944438979, ln(.95/.05) = +2.944438979
    assert p.lower == pytest.approx(-2.9444389791664403) and p.upper == pytest.approx(2.94443897916)
    assert sprt((5, 10, 20, 15, 10), p).verdict is None
    # (2, 10, 40, 60, 48), N = 160: mu = (2.5 + 20 + 45 + 48)/160 = 0.721875,
    # var = 0.0562402344 -> LLR = 160 * .0143871842 * (1.44375 - 1.0143871842)/(2 * .0562402344)
    #     = 8.787050017 >= 2.944 -> H1; the mirrored counts give -9.3759268 -> H0
    assert sprt_llr((2, 10, 40, 60, 48), 0, 10) == pytest.approx(8.787050017247466, abs=1e-9)
    assert sprt((2, 10, 40, 60, 48), p).verdict == "H1"
    assert sprt((48, 60, 40, 10, 2), p).verdict == "H0"
    # zero counts are regularised to 1e-3 (fishtest): ten DD pairs -> N = 10.004, mu = .5,
    # var = 6.2475e-5, LLR = 10.004 * .0143871842 * (-.0143871842) / (2 * 6.2475e-5) = -16.5725
    assert sprt_llr((0, 0, 10, 0, 0), 0, 10) == pytest.approx(-16.572535535961027, abs=1e-6)
    assert sprt_llr((0, 0, 0, 0, 0), 0, 10) == 0.0


def test_sprt_params_validation():
    with pytest.raises(ConfigError, match="elo0 < elo1"):
        SprtParams(10, 0)
    with pytest.raises(ConfigError, match="alpha"):
        SprtParams(0, 5, alpha=0.7)


def test_match_result_from_records():
    # pair 0: A wins as White (1-0), A draws as Black -> 3 points (WD, index 3)
    # pair 1: A loses as White (0-1), A wins as Black (0-1) -> 2 points (WL, index 2)
    # pair 2: only the first game: A draws -> no complete pair
    recs = [rec(0, "1-0"), rec(1, "1/2-1/2"), rec(2, "0-1"), rec(3, "0-1"), rec(4, "1/2-1/2")]
    r = match_result(list(reversed(recs)))
    assert (r.games, r.wins, r.draws, r.losses) == (5, 2, 2, 1)
    assert (r.points_a, r.points_b) == (6, 4) and r.a_wins
    assert r.pentanomial == (0, 0, 1, 1, 0)
    assert r.score == pytest.approx(0.6)  # (2 + 1)/5
    assert r.elo == pytest.approx(-400 * math.log10(1 / 0.6 - 1))  # 70.437
    assert [x.key[3] for x in r.records] == [0, 1, 2, 3, 4]
    # pentanomial over 2 pairs: scores .5 and .75, mu = .625, var = .015625, sigma = .125
    # d = 1.96 * .125 / sqrt(2) = .17324; Elo(.79824) - Elo(.45176) halved
    d = Z * 0.125 / math.sqrt(2)
    expect = (elo_from_score(0.625 + d) - elo_from_score(0.625 - d)) / 2
    assert r.elo_error == r.elo_error_pentanomial == pytest.approx(expect)
    # trinomial: var = (2 (.4)^2 + 2 (.1)^2 + 1 (.6)^2)/5 = (.32 + .02 + .36)/5 = 0.14
    # d = 1.96 sqrt(.14)/sqrt(5) = 0.327959; Elo(.927959) - Elo(.272041) halved = 307.494
    d = Z * math.sqrt(0.14) / math.sqrt(5)
    expect = (elo_from_score(0.6 + d) - elo_from_score(0.6 - d)) / 2
    assert r.elo_error_trinomial == pytest.approx(expect)
    assert expect == pytest.approx(307.4942, abs=1e-3)
    d = r.to_dict()
    assert d["elo_error_trinomial"] == pytest.approx(expect) and d["pentanomial"] == [0, 0, 1, 1, 0]
    assert "records" not in d and len(r.to_dict(records=True)["records"]) == 5


def test_match_result_all_wins_reports_inf_as_null():
    r = match_result([rec(0, "1-0"), rec(1, "0-1")])
    assert r.elo == math.inf and r.pentanomial == (0, 0, 0, 0, 1)
    assert r.to_dict()["elo"] is None and r.los == pytest.approx(0.5 * (1 + math.erf(1.0)))


def test_pentanomial_from_records_ignores_half_pairs():
    assert pentanomial_from_records([rec(0, "1-0"), rec(1, "1-0"), rec(3, "1-0")]) == \
        (0, 0, 1, 0, 0)  # pair 0: A won as White, lost as Black -> 2 points
