"""Match statistics: W/D/L, points, pentanomial pairs, score, Elo with 95% error, LOS, SPRT.

Everything is from player A's point of view. Conventions:

- points: win 2, draw 1, loss 0 (the differential-evolution paper); score s = (W + D/2) / N.
- Elo is logistic: Elo(s) = -400 log10(1/s - 1). At s = 0 or s = 1 it is -inf / +inf (no
  finite estimate: A lost / won every game); ``to_dict`` writes non-finite numbers as null.
- 95% error bar: (Elo(s + 1.96 sigma/sqrt(n)) - Elo(s - 1.96 sigma/sqrt(n))) / 2, with sigma the
  per-game (trinomial, n = games) or per-pair (pentanomial, n = complete pairs, pair scores
  0, 1/4, 1/2, 3/4, 1) standard deviation. It is +inf when an end of the interval leaves (0, 1)
  (tiny matches). The pentanomial bar is the honest one for colour-swapped pairs and is the
  ``elo_error`` whenever the match has complete pairs.
  With no spread (sigma 0: every game, or every pair, scored the same) there is no interval to
  estimate and the bar is +inf as well, never 0.
- A match whose complete pairs all scored 1-1 (:func:`uninformative`: colour-swapped games that
  mirror each other, e.g. deterministic self-play at a fixed depth) carries no information on
  which player is stronger; it is said so instead of an Elo with an error bar.
- pentanomial counts index the pair's points for A (0..4): LL, LD, DD or WL, WD, WW. A pair
  counts only when both of its games were played (a stopped match may end on half a pair).
- LOS = 0.5 (1 + erf((W - L) / sqrt(2 (W + L)))), 0.5 without decisive games.
- nElo (normalised Elo, fishtest and fastchess): (s - 0.5) / sigma_x * 800 / ln 10, with sigma_x
  the per-game standard deviation (trinomial) or sqrt(2) times the per-pair one (pentanomial);
  its 95% error Z95 * 800 / ln 10 / sqrt(n) (n games) or / sqrt(2 n) (n pairs). Undefined (None)
  without spread (sigma 0).
- LOS of a model (fastchess's): Phi((s - 0.5) / (sigma / sqrt(n))), the normal approximation on
  the model's variance (0 or 1 without spread, 0.5 when s = 0.5).
- SPRT: fishtest's GSPRT approximation on pentanomial counts with logistic Elo
  (fishtest stat_util.LLR_logistic): s0, s1 = logistic scores of elo0, elo1; counts regularised
  (each count at least 1e-3, so the variance is never 0); N = sum of counts, mu and var the mean
  and variance of the pair score; LLR = N (s1 - s0) (2 mu - s0 - s1) / (2 var). Bounds
  ln(beta / (1 - alpha)) and ln((1 - beta) / alpha); verdict 'H1' at or above the upper bound,
  'H0' at or below the lower one, None in between, and None before ``min_pairs`` complete
  pairs (default 4; fishtest never sees so few, but a mini-match does).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import ConfigError
from .gamerecord import GameRecord

Z95 = 1.959963984540054
"""Two-sided 95% normal quantile."""


@dataclass(frozen=True)
class SprtParams:
    """Hypotheses and error rates of a sequential probability ratio test."""

    elo0: float = 0.0
    """Elo of H0 (logistic)."""
    elo1: float = 10.0
    """Elo of H1 (logistic), above elo0."""
    alpha: float = 0.05
    """False-positive rate (accept H1 when H0 is true)."""
    beta: float = 0.05
    """False-negative rate (accept H0 when H1 is true)."""
    min_pairs: int = 4
    """No verdict before this many complete pairs (with the 1e-3 regularisation a single WW
    pair already gives LLR 3.8 for 0/10 Elo: the approximation needs a few pairs)."""

    def __post_init__(self) -> None:
        if not isinstance(self.min_pairs, int) or self.min_pairs < 1:
            raise ConfigError(f"SPRT: min_pairs must be a positive integer, got {self.min_pairs!r}")
        if not (math.isfinite(self.elo0) and math.isfinite(self.elo1)) or self.elo0 >= self.elo1:
            raise ConfigError(f"SPRT: need elo0 < elo1, got {self.elo0:g} and {self.elo1:g}; "
                              "e.g. --sprt 0 10")
        for name, v in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < v < 0.5:
                raise ConfigError(f"SPRT: {name} must be in (0, 0.5), got {v:g}; 0.05 is usual")

    @property
    def lower(self) -> float:
        """Lower LLR bound ln(beta / (1 - alpha)): at or below it, accept H0."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Upper LLR bound ln((1 - beta) / alpha): at or above it, accept H1."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True)
class SprtResult:
    """State of an SPRT after the pairs played."""

    llr: float
    """Log-likelihood ratio."""
    lower: float
    """Lower bound (accept H0)."""
    upper: float
    """Upper bound (accept H1)."""
    verdict: str | None
    """'H0', 'H1' or None (continue)."""
    elo0: float
    """Elo of H0."""
    elo1: float
    """Elo of H1."""

    def to_dict(self) -> dict:
        return {"llr": self.llr, "lower": self.lower, "upper": self.upper,
                "verdict": self.verdict, "elo0": self.elo0, "elo1": self.elo1}


def sprt_settings(params: SprtParams | None) -> list[float] | None:
    """An SPRT as a match folder's settings keep it: [elo0, elo1, alpha, beta] (None: none)."""
    return None if params is None else [params.elo0, params.elo1, params.alpha, params.beta]


# ---- pure functions ----------------------------------------------------------------------------

def logistic_score(elo: float) -> float:
    """Expected score at a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(s: float) -> float:
    """-400 log10(1/s - 1); -inf at s <= 0, +inf at s >= 1."""
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0) + 0.0  # + 0.0: no -0.0 at s = 0.5


def elo_error(s: float, sigma: float, n: float) -> float:
    """Half the width of the 95% Elo interval (Elo(s + z sigma/sqrt n) - Elo(s - z ...)) / 2."""
    if n <= 0 or sigma <= 0:
        return math.inf  # no spread: no interval can be estimated (never a bar of 0)
    d = Z95 * sigma / math.sqrt(n)
    hi, lo = elo_from_score(s + d), elo_from_score(s - d)
    if math.isinf(hi) or math.isinf(lo):
        return math.inf
    return (hi - lo) / 2.0


def trinomial_sigma(wins: int, draws: int, losses: int) -> float:
    """Per-game standard deviation of the score (game scores 1, 1/2, 0)."""
    n = wins + draws + losses
    if n == 0:
        return 0.0
    s = (wins + 0.5 * draws) / n
    var = (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n
    return math.sqrt(var)


def pentanomial_stats(counts: Sequence[float]) -> tuple[float, float, float]:
    """(pairs, mean pair score, per-pair standard deviation); pair scores 0, 1/4, ..., 1."""
    n = float(sum(counts))
    if n <= 0:
        return 0.0, 0.5, 0.0
    mu = sum(c * i / 4.0 for i, c in enumerate(counts)) / n
    var = sum(c * (i / 4.0 - mu) ** 2 for i, c in enumerate(counts)) / n
    return n, mu, math.sqrt(var)


def uninformative(pentanomial: Sequence[float]) -> bool:
    """True when the match has complete pairs and every one scored 1-1 (a win each, or two
    draws): such pairs, e.g. the mirror-image games of deterministic self-play at a fixed depth,
    say nothing about which player is stronger."""
    counts = [float(c) for c in pentanomial]
    return len(counts) == 5 and sum(counts) > 0 and counts[2] == sum(counts)


NO_INFORMATION = ("Elo: no information (every pair of games scored 1-1, as the mirror-image "
                  "games of deterministic self-play do)")
"""How a match that :func:`uninformative` holds is said instead of its Elo."""


def elo_text(elo: float | None, error: float | None, pentanomial: Sequence[float] = ()) -> str:
    """'Elo +12.3 +- 45.6 (95%)', with +-inf / inf for non-finite figures (None counts as
    non-finite: a stored figure), or :data:`NO_INFORMATION`."""
    if uninformative(pentanomial):
        return NO_INFORMATION
    elo_t = "n/a" if elo is None else _elo_text(elo)
    err_t = f"{error:.1f}" if error is not None and math.isfinite(error) else "inf"
    return f"Elo {elo_t} +- {err_t} (95%)"


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority 0.5 (1 + erf((W - L) / sqrt(2 (W + L))))."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


NELO_SCALE = 800.0 / math.log(10.0)
"""nElo per unit of (s - 0.5) / sigma: Elo's slope at s = 0.5 (400 / ln 10) times 2."""


def nelo(s: float, sigma: float, n: float, *, pairs: bool) -> tuple[float | None, float | None]:
    """(nElo, its 95% error) of score ``s`` with per-game (``pairs`` False) or per-pair standard
    deviation ``sigma`` over ``n`` games or pairs; (None, None) without spread or games."""
    if n <= 0 or sigma <= 0:
        return None, None
    spread = sigma * math.sqrt(2.0) if pairs else sigma
    return ((s - 0.5) / spread * NELO_SCALE + 0.0,
            Z95 * NELO_SCALE / math.sqrt(2.0 * n if pairs else n))


def los_normal(s: float, sigma: float, n: float) -> float:
    """Likelihood of superiority by the normal approximation, Phi((s - 0.5) sqrt(n) / sigma)."""
    if n <= 0 or s == 0.5:
        return 0.5
    if sigma <= 0:
        return 1.0 if s > 0.5 else 0.0
    return 0.5 * (1.0 + math.erf((s - 0.5) * math.sqrt(n) / (sigma * math.sqrt(2.0))))


def llr_fraction(llr: float, lower: float, upper: float) -> float:
    """How far the LLR has gone towards the bound on its side: llr / upper at or above 0,
    -llr / lower below (fastchess's percentage over 100: 1.0 reached H1, -1.0 reached H0)."""
    return llr / upper if llr >= 0 else -llr / lower


def sprt_llr(pentanomial: Sequence[float], elo0: float, elo1: float) -> float:
    """fishtest's GSPRT LLR (logistic Elo) on pentanomial counts (see the module docstring)."""
    if sum(pentanomial) == 0:
        return 0.0
    counts = [max(float(c), 1e-3) for c in pentanomial]
    n, mu, sigma = pentanomial_stats(counts)
    s0, s1 = logistic_score(elo0), logistic_score(elo1)
    return n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * sigma * sigma)


def sprt(pentanomial: Sequence[float], params: SprtParams) -> SprtResult:
    """The SPRT state for these counts."""
    llr = sprt_llr(pentanomial, params.elo0, params.elo1)
    verdict = "H1" if llr >= params.upper else "H0" if llr <= params.lower else None
    if sum(pentanomial) < params.min_pairs:
        verdict = None
    return SprtResult(llr=llr, lower=params.lower, upper=params.upper, verdict=verdict,
                      elo0=params.elo0, elo1=params.elo1)


def pentanomial_from_records(records: Sequence[GameRecord]) -> tuple[int, int, int, int, int]:
    """Counts of complete colour-swapped pairs by A's points in the pair (0..4)."""
    by_pair: dict[tuple, list[GameRecord]] = {}
    for r in records:
        by_pair.setdefault(r.key[:3], []).append(r)
    counts = [0, 0, 0, 0, 0]
    for games in by_pair.values():
        if len(games) == 2 and {g.key[3] % 2 for g in games} == {0, 1}:
            counts[sum(g.points_a() for g in games)] += 1
    return tuple(counts)  # type: ignore[return-value]


def _finite(x):
    return x if isinstance(x, float) and math.isfinite(x) or isinstance(x, int) else None


@dataclass(frozen=True)
class MatchResult:
    """The outcome of one mini-match, from player A's point of view."""

    games: int
    """Games played."""
    wins: int
    """Games A won."""
    draws: int
    """Drawn games."""
    losses: int
    """Games A lost."""
    points_a: int
    """A's points (win 2, draw 1, loss 0)."""
    points_b: int
    """B's points."""
    pentanomial: tuple[int, int, int, int, int]
    """Complete pairs by A's pair points 0..4 (LL, LD, DD|WL, WD, WW)."""
    score: float
    """(W + D/2) / N (0.5 when no game was played)."""
    elo: float
    """Logistic Elo of A over B (+-inf when A won / lost every game)."""
    elo_error: float
    """95% error bar: pentanomial when there are complete pairs, trinomial otherwise."""
    elo_error_trinomial: float
    """95% error bar from the per-game variance."""
    elo_error_pentanomial: float
    """95% error bar from the per-pair variance (inf without complete pairs)."""
    los: float
    """Likelihood of superiority of A."""
    sprt: SprtResult | None
    """SPRT state, when the match ran one."""
    stopped_early: bool
    """True when a stop rule ended the match before all its games."""
    a_wins: bool
    """points_a > points_b (the DE selection rule)."""
    records: tuple[GameRecord, ...] = field(default=(), repr=False)
    """The games, in game order."""

    def to_dict(self, *, records: bool = False) -> dict:
        """JSON-safe form (non-finite Elo figures become null); records only when asked."""
        d = {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "points_a": self.points_a, "points_b": self.points_b,
            "pentanomial": list(self.pentanomial), "score": self.score,
            "elo": _finite(self.elo), "elo_error": _finite(self.elo_error),
            "elo_error_trinomial": _finite(self.elo_error_trinomial),
            "elo_error_pentanomial": _finite(self.elo_error_pentanomial),
            "los": self.los, "sprt": self.sprt.to_dict() if self.sprt else None,
            "stopped_early": self.stopped_early, "a_wins": self.a_wins,
        }
        if records:
            d["records"] = [r.to_dict() for r in self.records]
        return d


def match_result(records: Sequence[GameRecord], *, sprt_params: SprtParams | None = None,
                 stopped_early: bool = False) -> MatchResult:
    """Statistics of a match from its game records (any order; stored in game order)."""
    recs = tuple(sorted(records, key=lambda r: r.key))
    pts = [r.points_a() for r in recs]
    wins, draws, losses = pts.count(2), pts.count(1), pts.count(0)
    n = len(recs)
    points_a = sum(pts)
    points_b = 2 * n - points_a
    score = (wins + 0.5 * draws) / n if n else 0.5
    penta = pentanomial_from_records(recs)
    err_tri = elo_error(score, trinomial_sigma(wins, draws, losses), n)
    pairs, mu, sigma_pair = pentanomial_stats(penta)
    err_penta = elo_error(mu, sigma_pair, pairs) if pairs else math.inf
    return MatchResult(
        games=n, wins=wins, draws=draws, losses=losses, points_a=points_a, points_b=points_b,
        pentanomial=penta, score=score, elo=elo_from_score(score) if n else 0.0,
        elo_error=err_penta if pairs else err_tri, elo_error_trinomial=err_tri,
        elo_error_pentanomial=err_penta, los=los(wins, losses),
        sprt=sprt(penta, sprt_params) if sprt_params is not None else None,
        stopped_early=stopped_early, a_wins=points_a > points_b, records=recs)


SUMMARY_KEYS = ("games", "wins", "draws", "losses", "pentanomial", "score", "elo", "elo_error",
                "los", "sprt")
"""The keys of ``evotune match --json`` before its results block
(:func:`evotune.match.resultsblock.json_summary` adds ``block``)."""


def summary_dict(result: MatchResult) -> dict:
    """A match's summary: exactly :data:`SUMMARY_KEYS`."""
    d = result.to_dict()
    return {k: d[k] for k in SUMMARY_KEYS}


def _elo_text(x: float) -> str:
    return f"{x:+.1f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")
