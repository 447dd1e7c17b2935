"""A run's strength as it goes: the Elo of each generation's recommendation against the start
(a run from random weights: against its initial mean, and against its engine spec's own weights,
``shannon``, by checkpoint matches where stored), with its 95% error, as a curve over games.
Read only, computed from the store, so the tune page (:mod:`evotune.serve`) and the static
report draw the same curve.

Two measures, both from what the run stored:

- **the rating model** (every run that plays head-to-head matches): every stored mini-match
  (each generation file keeps both weight vectors of each request and the points each scored) is
  one observation of a linear Elo model ``Elo(w) = theta . (w - base) / span``: the expected
  score of A against B is ``1 / (1 + 10^(-(Elo(a) - Elo(b)) / 400))``. ``theta`` is fitted by
  maximum a posteriori (each match weighs as many games as it had, each game's score an upper
  bound of its variance, so the bars do not understate the noise), with a normal prior of
  :data:`PRIOR_ELO` Elo per weight over its explored span (``span``: the largest minus the
  smallest value any played vector had), which keeps a weight no match has moved at zero; the
  covariance is widened by Pearson's dispersion when the scores spread wider than the model's.
  A strategy moves its recommendation towards the vectors that happened to score, so a fit on
  the games that drove a move credits their noise as strength (random outcomes would read as
  hundreds of Elo). Two fits therefore: one on the matches of even generations, one on the odd
  ones; each generation's move (its recommendation less the previous one) is credited by the
  fit that did not see its games, and the initial mean's distance from the base by both. The
  curve is the sum over the moves up to each generation; its error is ``1.96 sqrt(sum d' H^-1
  d)`` over the two fits (``H``: a fit's posterior Hessian, ``d``: the moves it credits). The
  base is the start of a run from given weights, else the initial population's mean. A later
  game informs an earlier point, and a recommendation far from every played vector is an
  extrapolation, which its wide bar shows.
- **checkpoint matches** (``evotune compare --verify-every``, stored in verify-curve.json):
  each checkpoint's recommendation played against the engine spec's own weights on held-out
  openings; measured, not modelled, and drawn beside the model where stored.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EvotuneError
from ..runs.records import Generation
from ..runs.rundata import RunData, load_run
from ..runs.store import Store
from .figure import finish, new_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PRIOR_ELO = 400.0
"""The prior's standard deviation: Elo of moving one weight over its whole explored span."""
MAX_POINTS = 200
"""At most this many curve points (generations are thinned evenly beyond it; the last is kept)."""
Z95 = 1.959963984540054
LOGISTIC = math.log(10.0) / 400.0
METHOD = ("a linear rating model fitted to the stored mini-matches of the run (both weight "
          "vectors and the points of each), in two fits, on even and on odd generations; each "
          "generation's move is credited by the fit that did not see its games; Elo of each "
          "generation's recommendation against {base}, 95% error from the fits' covariances")


@dataclass(frozen=True)
class StrengthCurve:
    """The strength of a run's recommendation over games."""

    against: str
    """What the Elo is measured against ('the start', 'the initial mean')."""
    method: str
    """How it was measured, in one sentence ('' when there is no curve)."""
    games: tuple[int, ...]
    """Games played up to each point."""
    generations: tuple[int, ...]
    """The generation of each point."""
    elo: tuple[float, ...]
    """The model's Elo of each point's recommendation."""
    error: tuple[float, ...]
    """Its 95% error bar."""
    matches: int = 0
    """Mini-matches the model was fitted to."""
    checkpoints: tuple[dict, ...] = ()
    """verify-curve.json's points: {'games', 'elo', 'error', 'opponent'}."""
    note: str = ""
    """Why there is no model curve ('' when there is one)."""

    def to_json(self) -> dict:
        return {"against": self.against, "method": self.method, "games": list(self.games),
                "generations": list(self.generations), "elo": list(self.elo),
                "error": list(self.error), "matches": self.matches,
                "checkpoints": list(self.checkpoints), "note": self.note}


@dataclass(frozen=True)
class Played:
    """The stored mini-matches a rating model is fitted to, as arrays."""

    diff: np.ndarray
    """(matches, weights): A's weights less B's."""
    low: np.ndarray
    """(weights,): the smallest value of each weight any played vector had."""
    high: np.ndarray
    """(weights,): the largest."""
    score: np.ndarray
    """(matches,): A's score, 0..1."""
    games: np.ndarray
    """(matches,): each match's games."""
    generation: np.ndarray
    """(matches,): the generation each match was played in."""


def played(gens: Sequence[Generation]) -> Played | None:
    """The head-to-head matches of ``gens`` (a gauntlet's are not: their points are against the
    opponents); None when there are none."""
    rows = [m for g in gens for m in g.matches if m.games > 0 and m.gauntlet_games is None]
    at = [g.generation for g in gens for m in g.matches if m.games > 0
          and m.gauntlet_games is None]
    if not rows:
        return None
    a = np.array([m.a for m in rows], dtype=np.float64)
    b = np.array([m.b for m in rows], dtype=np.float64)
    both = np.vstack([a, b])
    return Played(diff=a - b, low=both.min(axis=0), high=both.max(axis=0),
                  score=np.array([m.points_a / (2.0 * m.games) for m in rows]),
                  games=np.array([float(m.games) for m in rows]),
                  generation=np.array(at, dtype=np.int64))


def strength_curve(store: Store, data: RunData | None = None,
                   gens: list[Generation] | None = None) -> StrengthCurve:
    """The run's strength curve (``data``, ``gens``: the run and its generations, read here
    when not given)."""
    gens = store.generations() if gens is None else gens
    if data is None and gens:
        data = load_run(store)
    base, against = _base(data, gens)
    means = np.array([g.mean for g in gens], dtype=np.float64)
    return curve_of(played(gens), means=means,
                    games=np.array([g.games_total for g in gens], dtype=np.int64),
                    generations=np.array([g.generation for g in gens], dtype=np.int64),
                    base=base, against=against, checkpoints=checkpoints_of(store))


def curve_of(matches: Played | None, *, means: np.ndarray, games: np.ndarray,
             generations: np.ndarray, base: np.ndarray | None, against: str,
             checkpoints: tuple[dict, ...] = ()) -> StrengthCurve:
    """The curve from a run's matches and its generations' recommendations (``means``: one row
    per generation; ``base``: what the Elo is against)."""
    if not len(means) or base is None:
        return StrengthCurve(against=against, method="", games=(), generations=(), elo=(),
                             error=(), checkpoints=checkpoints,
                             note="no generation is stored yet")
    if matches is None:
        note = ("this run stores no head-to-head matches (a fit, or a gauntlet run), so the "
                "rating model has nothing to fit" if games[-1] or len(means) > 1
                else "no match is stored yet")
        return StrengthCurve(against=against, method="", games=(), generations=(), elo=(),
                             error=(), checkpoints=checkpoints, note=note)
    span = np.maximum(matches.high - matches.low, 1.0)
    # two fits, on the matches of even and of odd generations: a generation's move is credited
    # by the fit that never saw its games (the move chased those games' noise: a fit on them
    # would credit the noise as strength)
    fits = []
    for fold in (0, 1):
        pick = matches.generation % 2 == fold
        if not pick.any():
            pick = np.ones_like(pick)  # one fold only (a one-generation run): in-sample
        fits.append(fit_ratings(matches.diff[pick] / span, matches.score[pick],
                                matches.games[pick]))
    moves = np.diff(means, axis=0) / span  # generation g's move: row g - 1
    folds = generations[1:] % 2
    by_other = [np.cumsum(np.where((folds == 1 - f)[:, None], moves, 0.0), axis=0)
                for f in (0, 1)]  # moves of odd generations (fit 0), of even ones (fit 1)
    start = (means[0] - base) / span
    picks = _thin(len(means))
    elos: list[float] = []
    var: list[float] = []
    for i in picks:
        e = 0.5 * (fits[0][0] + fits[1][0]) @ start
        v = 0.25 * (start @ fits[0][1] @ start + start @ fits[1][1] @ start)
        if i > 0:
            for f in (0, 1):
                d = by_other[f][i - 1]
                e += fits[f][0] @ d
                v += d @ fits[f][1] @ d
        elos.append(float(e))
        var.append(float(v))
    elo = np.array(elos)
    err = Z95 * np.sqrt(np.maximum(np.array(var), 0.0))
    return StrengthCurve(
        against=against, method=METHOD.format(base=against),
        games=tuple(int(games[i]) for i in picks),
        generations=tuple(int(generations[i]) for i in picks),
        elo=tuple(round(float(v), 2) for v in elo), error=tuple(round(float(v), 2) for v in err),
        matches=int(len(matches.score)), checkpoints=checkpoints)


def fit_ratings(x: np.ndarray, y: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rating model's theta (MAP) and its posterior covariance, by Newton's method:
    ``x`` (matches, weights): A's weights less B's, over each weight's span; ``y``: A's score
    (0..1); ``n``: the match's games."""
    k = x.shape[1]
    prior = np.full(k, 1.0 / PRIOR_ELO ** 2)
    theta = np.zeros(k)
    hess = np.diag(prior)
    for _ in range(25):
        p = 1.0 / (1.0 + np.exp(-LOGISTIC * (x @ theta)))
        grad = LOGISTIC * (x.T @ (n * (p - y))) + prior * theta
        w = n * p * (1.0 - p) * LOGISTIC ** 2
        hess = (x.T * w) @ x + np.diag(prior)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.max(np.abs(step))) < 1e-3:
            break
    p = 1.0 / (1.0 + np.exp(-LOGISTIC * (x @ theta)))
    hess = (x.T * (n * p * (1.0 - p) * LOGISTIC ** 2)) @ x + np.diag(prior)
    # quasi-likelihood: scores spread wider than the model's binomial (Pearson's dispersion
    # above 1) widen the covariance by it, so the bars follow the data's own noise
    dof = len(y) - k
    dispersion = (float(np.sum(n * (y - p) ** 2 / np.maximum(p * (1.0 - p), 1e-9))) / dof
                  if dof > 0 else 1.0)
    return theta, np.linalg.inv(hess) * max(1.0, dispersion)


def _thin(count: int) -> list[int]:
    if count <= MAX_POINTS:
        return list(range(count))
    return sorted(set(np.linspace(0, count - 1, MAX_POINTS).round().astype(int).tolist()))


def _base(data: RunData | None, gens: Sequence[Generation]) -> tuple[np.ndarray | None, str]:
    """The vector the Elo is measured against and its name: the start of a run from given
    weights (the engine spec's values, which its final check plays), else the initial
    population's mean (a run from random weights: the spec's own weights lie far from every
    played vector, where the model can only extrapolate; the checkpoint matches measure those)."""
    if not gens or data is None:
        return None, "the start"
    return base_of(data.config, data.reference, np.asarray(gens[0].mean, dtype=np.float64))


def base_of(config, reference: np.ndarray, initial: np.ndarray) -> tuple[np.ndarray, str]:
    """The start of a run from given weights (``reference``: its spec's values), else its
    initial mean (``initial``), and its name."""
    ref = np.asarray(reference, dtype=np.float64)
    given = config.starts_from_given
    if given and ref.shape == initial.shape and np.all(np.isfinite(ref)):
        return ref, "the start"
    return initial, "the initial mean"


def checkpoints_of(store: Store) -> tuple[dict, ...]:
    """verify-curve.json's points as {'games', 'elo', 'error', 'opponent'} (none when absent or
    unreadable: the page says so)."""
    try:
        doc = store.read_document("verify-curve") or {}
    except EvotuneError:
        return ()
    out = []
    for p in doc.get("points", []) if isinstance(doc.get("points"), list) else []:
        try:
            m = p["match"]
            out.append({"games": int(p["games"]), "elo": float(m["elo"]),
                        "error": float(m["elo_error"]), "opponent": "shannon"})
        except (KeyError, TypeError, ValueError):
            continue
    return tuple(out)


def strength_figure(curve: StrengthCurve) -> Figure | None:
    """The curve as a figure (the report's ``strength``): the model's Elo with its 95% band
    over games, the checkpoint matches as points with their bars; None when there is neither."""
    if not curve.games and not curve.checkpoints:
        return None
    fig = new_figure(figsize=(7.5, 4.0), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    if curve.games:
        xs, elo, err = np.array(curve.games), np.array(curve.elo), np.array(curve.error)
        ax.plot(xs, elo, color="C0", label=f"rating model: Elo vs {curve.against}")
        ax.fill_between(xs, elo - err, elo + err, color="C0", alpha=0.18, linewidth=0,
                        label="95% interval")
    if curve.checkpoints:
        ax.errorbar([c["games"] for c in curve.checkpoints], [c["elo"] for c in curve.checkpoints],
                    yerr=[c["error"] for c in curve.checkpoints], fmt="o", color="C1", capsize=3,
                    label="checkpoint matches vs shannon")
    ax.axhline(0.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_xlabel("games played")
    ax.set_ylabel("Elo")
    ax.set_title("strength as it goes" + (f" ({curve.matches} mini-matches)" if curve.matches
                                          else ""))
    ax.legend(fontsize="small")
    return finish(fig)
