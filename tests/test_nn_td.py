"""TD(lambda) targets of a game, on a hand-made game worked out by hand."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evotune.errors import FieldError
from evotune.learn.nn.tdtargets import td_scores, td_targets


def sig(cp: float) -> float:
    return 1 / (1 + math.exp(-cp / 400))


def test_a_hand_made_game():
    # four positions, White's root scores 0, +100, -100, +400 cp, then White wins.
    # v1 = sig(100) = 0.562177, v2 = sig(-100) = 0.437823, v3 = sig(400) = 0.731059, v4 = R = 1
    # G3 = R = 1
    # G2 = 0.3 * v3 + 0.7 * G3 = 0.219318 + 0.7      = 0.919318
    # G1 = 0.3 * v2 + 0.7 * G2 = 0.131347 + 0.643522 = 0.774869
    # G0 = 0.3 * v1 + 0.7 * G1 = 0.168653 + 0.542409 = 0.711062
    g = td_targets([0, 100, -100, 400], 1.0)
    assert g == pytest.approx([0.711062, 0.774869, 0.919318, 1.0], abs=2e-6)
    # the closed form: G0 = 0.3 (v1 + 0.7 v2 + 0.49 v3) + 0.343 R
    assert g[0] == pytest.approx(0.3 * (sig(100) + 0.7 * sig(-100) + 0.49 * sig(400)) + 0.343)
    # as scores: 400 * ln(G / (1 - G)): 400 * ln(2.46095) = 360.2, 400 * ln(3.44186) = 494.4,
    # 400 * ln(11.3943) = 973.2; the last (a certain win) is clipped to +32000
    assert td_scores([0, 100, -100, 400], 1.0).tolist() == [
        round(400 * math.log(x / (1 - x))) for x in g[:3]] + [32000]
    assert td_scores([0, 100, -100, 400], 1.0)[:3].tolist() == [360, 494, 973]


def test_lambda_ends_and_a_lost_or_drawn_game():
    scores = [30, -50, 200, 0, -700]
    # lambda 0: the next position's value, the last position the result
    assert td_targets(scores, 0.0, lam=0.0) == pytest.approx(
        [sig(-50), sig(200), sig(0), sig(-700), 0.0])
    # lambda 1: the result everywhere
    assert td_targets(scores, 0.5, lam=1.0) == pytest.approx([0.5] * 5)
    # a one-position game: its result
    assert td_targets([123], 0.5).tolist() == [0.5]
    assert td_scores([123], 0.0).tolist() == [-32000]
    assert td_targets([], 1.0).size == 0


def test_bad_inputs_name_their_field():
    for kwargs, field in (({"scores": [0, np.nan], "result": 1.0}, "scores"),
                          ({"scores": [0], "result": 0.7}, "result"),
                          ({"scores": [0], "result": 1.0, "lam": 1.5}, "lam"),
                          ({"scores": [0], "result": 1.0, "scale": 0}, "scale")):
        with pytest.raises(FieldError) as err:
            td_targets(**kwargs)
        assert err.value.field == field
