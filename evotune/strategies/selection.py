"""Selection under noise: how a challenger (DE's trial, the EA's offspring) replaces its incumbent.

Three rules, chosen by the strategy parameter ``selection``:

- ``paper``: the differential-evolution paper's mini-match of ``games`` games with early
  termination; the challenger replaces the incumbent when it scores strictly more points. At
  the differences of a random start (hundreds of Elo) this decides well; at the 5 to 30 Elo
  that separate vectors near a good evaluation a 4-game match is mostly noise, and a population
  that follows it drifts below where it started (docs/results/finetune-study.md).
- ``race``: a sequential comparison. Game pairs are played until fishtest's GSPRT on the
  pentanomial pairs of challenger against incumbent, H0 ``elo <= 0`` against H1
  ``elo >= race_elo`` with error rates ``race_alpha`` and ``race_beta``, accepts a hypothesis, or
  until ``race_games`` games; the challenger replaces the incumbent only on H1. An undecided race
  (the cap reached) keeps the incumbent, so a replacement is made on stated evidence: a
  challenger no better than its incumbent replaces it with probability at most about
  ``race_alpha`` (Wald's bound, for the test run to its end; the cap only lowers it). The
  loosely set error rates trade power for games, as racing in evolution strategies does
  (Heidrich-Meisner & Igel 2009): a comparison costs a handful of pairs when the difference is
  large and at most ``race_games`` games otherwise.
- ``model``: the comparison is played as a race (the same request, so clear cases stop early),
  but the verdict is the rating model's over every game of the run so far
  (:mod:`evotune.match.rating`, handed over by the run loop as ``MatchOutcome.rated``): the
  challenger replaces the incumbent when the model rates it higher by at least ``model_z``
  standard errors of the difference, whatever games produced the evidence (the incumbent's
  earlier comparisons count for it). ``model_prior`` is the model's prior (Elo standard
  deviation of a vector's rating around the start). The strategy keeps each individual's
  rating, so ``recommended('rated')`` is the individual the model rates highest.

A run that starts from earlier weights (``--init-from``, ``SPEC:WEIGHTS``) races by default
(:func:`evotune.kinds.games.lifecycle.with_start`); a run from random weights keeps the paper's rule,
which its reproduction needs. The runner applies the stop rule pair by pair in game order, so a
race's result is the same for any number of workers and after a resume.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import MatchOutcome, MatchRequest, Param
from .ratingrequest import ModelRequest

SELECTIONS = ("paper", "race", "model")
MODEL_FORMS = ("vectors", "linear")
"""``model_form``: the rating model's form (:mod:`evotune.match.rating`)."""

SELECTION_PARAMS = {
    "selection": Param("paper", "choice", choices=SELECTIONS,
                       doc="how a challenger replaces its incumbent: 'paper' (strictly more "
                           "points in a games-game mini-match) or 'race' (game pairs until a "
                           "GSPRT says it is better, else the incumbent stays; the default of a "
                           "run from earlier weights) or 'model' (a race's games, decided by the "
                           "rating model over every game of the run)"),
    "race_games": Param(24, "int", low=4, high=100000, even=True,
                        doc="selection=race or model: most games of one comparison (even)"),
    "race_elo": Param(30.0, "float", low=0.0, high=1000.0, low_open=True,
                      doc="selection=race or model: Elo of the test's H1 (H0: 0)"),
    "race_alpha": Param(0.1, "float", low=0.0, high=0.5, low_open=True,
                        doc="selection=race or model: the test's false-positive rate (a challenger no "
                            "better than its incumbent replaces it at most this often)"),
    "race_beta": Param(0.2, "float", low=0.0, high=0.5, low_open=True,
                       doc="selection=race or model: the test's false-negative rate"),
    "model_z": Param(1.645, "float", low=0.0, high=10.0,
                     doc="selection=model: standard errors by which the model must rate the "
                         "challenger above its incumbent (1.645: one-sided 95%)"),
    "model_prior": Param(50.0, "float", low=0.0, high=1000.0, low_open=True,
                         doc="selection=model: the rating model's prior, Elo standard deviation "
                             "of a vector's rating around the start (model_form=linear: of each "
                             "weight's slope, Elo per fine-tuning scale unit)"),
    "model_form": Param("vectors", "choice", choices=MODEL_FORMS,
                        doc="selection=model: 'vectors' (a rating per distinct vector, "
                            "Bradley-Terry) or 'linear' (strength a linear function of the "
                            "weights, fitted over every game: each game informs every vector)"),
}
"""Parameters of the strategies whose challengers meet incumbents (de, jde, ea)."""


def check_selection_params(strategy: str, params: Mapping[str, object]) -> None:
    """Cross-parameter checks of :data:`SELECTION_PARAMS` (none yet beyond each range)."""
    del strategy, params


def rates(params: Mapping[str, object]) -> bool:
    """True when the strategy selects by the rating model (its outcomes carry ``rated``)."""
    return params.get("selection") == "model"


def selection_model(params: Mapping[str, Any], reference: tuple[float, ...]
                    ) -> ModelRequest | None:
    """The rating model a strategy with :data:`SELECTION_PARAMS` asks for: with
    ``selection = 'model'`` its form and prior, anchored at the start of a run from earlier
    weights (``init = 'reference'``: ``reference``); a run from random weights has no start to
    anchor the scale. None for the other selections."""
    if not rates(params):
        return None
    return ModelRequest(form=str(params["model_form"]), prior=float(params["model_prior"]),
                        anchor=reference if params.get("init") == "reference" else None)


def comparison(a: tuple[float, ...], b: tuple[float, ...], params: Mapping[str, Any], *,
               tag: tuple[int, ...]) -> MatchRequest:
    """The request that decides whether challenger ``a`` replaces incumbent ``b``."""
    if params["selection"] in ("race", "model"):
        return MatchRequest(a=a, b=b, games=int(params["race_games"]), stop="sprt",
                            sprt=(0.0, float(params["race_elo"]), float(params["race_alpha"]),
                                  float(params["race_beta"])), tag=tag)
    return MatchRequest(a=a, b=b, games=int(params["games"]), stop="decisive", tag=tag)


def challenger_wins(outcome: MatchOutcome, params: Mapping[str, Any]) -> bool:
    """True when the comparison's outcome replaces the incumbent by the run's rule."""
    if params["selection"] == "race":
        return outcome.verdict == "H1"
    if params["selection"] == "model":
        if outcome.rated is None:
            raise ValueError("selection=model needs the rating model's verdict "
                             "(MatchOutcome.rated); the run loop hands it over")
        elo_a, elo_b, error = outcome.rated
        return error > 0 and elo_a - elo_b >= float(params["model_z"]) * error
    return outcome.points_a > outcome.points_b
