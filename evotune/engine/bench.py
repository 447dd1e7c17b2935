"""``evotune bench``: the engine's speed figures and its search signature, in one short run.

Like Stockfish's ``bench``, the ``signature`` is the total node count of a fixed set of core
searches (fixed positions, fixed weights, fixed depth): it changes only when the search itself
changes, so a refactoring that claims not to alter the search must leave it unchanged. The speed
figures are wall-clock measurements and vary with the machine and its load.

Figures (keys of :meth:`BenchResult.as_dict`, the JSON object printed by ``--json``), for the
reference weights of an engine spec (``evotune bench --engine SPEC``; default the Shannon
reference weights, whose signature is pinned):

* ``engine``, ``features``: the spec and its feature set;

* ``search_nps``: nodes per second of the core over the fixed search set;
* ``reference_search_nps``: nodes per second of the python-chess reference search
  (evotune/engine/reference.py), measured in the same run on a smaller, shallower share of the
  same positions (it is ~100x slower);
* ``speedup``: ``search_nps / reference_search_nps``;
* ``perft_nps``: core perft nodes per second on fixed perft positions;
* ``game_seconds_median``: median wall time of complete core games (reference weights on both
  sides) from the first openings of ``2moves_v1.epd``;
* ``signature``: total core nodes of the fixed search set.
For a spec whose search is not alpha-beta, three more:

* ``algorithm``: the spec's search (``uct`` or ``probability``);
* ``algorithm_nps``: nodes per second of that search over the fixed search set, each position
  searched with the spec's default budget; the games use it too;
* ``simulations_per_second``: UCT simulations per second in the same searches (0 otherwise).

The search figures and the signature are always alpha-beta's (with the spec's evaluation).

A network (``--engine nnue:FILE``) is benched on the same positions, with a node limit on every
core search (``net_nodes``), game move (``net_game_nodes``) and reference search
(``net_reference_nodes``): a net's trees depend on the net, and an untrained one's are huge (its
quiescence finds few cut-offs). Its node count is then the limit, so a net's signature is the
CRC-32 of the searches' moves, scores, depths and principal variations instead
(:func:`results_signature`): it changes when the search or the net's evaluation changes.
"""
from __future__ import annotations

import logging
import statistics
import time
import zlib
from dataclasses import asdict, dataclass, replace

import chess

from ..errors import ConfigError
from ..limits import Limits
from ..paths import DEFAULT_OPENINGS
from ..space import SHANNON_REFERENCE
from ..spec.searchsettings import SearchSettings
from . import api as core
from . import reference
from .evaluation import evaluation_of
from .perftsuite import perft

logger = logging.getLogger(__name__)

BENCH_FENS = (
    # Bratko-Kopec middlegames (tests/data/bratko-kopec.epd: BK.03, 04, 05, 10, 11, 13, 17, 22)
    "2q1rr1k/3bbnnp/p2p1pp1/2pPp3/PpP1P1P1/1P2BNNP/2BQ1PRK/7R b - - 0 1",
    "rnbqkb1r/p3pppp/1p6/2ppP3/3N4/2P5/PPP1QPPP/R1B1KB1R w KQkq - 0 1",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "3rr1k1/pp3pp1/1qn2np1/8/3p4/PP1R1P2/2P1NQPP/R1B3K1 b - - 0 1",
    "2r1nrk1/p2q1ppp/bp1p4/n1pPp3/P1P1P3/2PBB1N1/4QPPP/R4RK1 w - - 0 1",
    "r2q1rk1/4bppp/p2p4/2pP4/3pP3/3Q4/PP1B1PPP/R3R1K1 w - - 0 1",
    "r2q1rk1/1ppnbppp/p2p1nb1/3Pp3/2P1P1P1/2N2N1P/PPB1QP2/R1B2RK1 b - - 0 1",
    "2r2rk1/1bqnbpp1/1p1ppn1p/pP6/N1P1P3/P2B1N1P/1B2QPP1/R2R2K1 b - - 0 1",
)
"""The fixed search set."""

PERFT_POSITIONS = (
    (chess.STARTING_FEN, 5),                                                   # 4,865,609
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 4),  # 4,085,603
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 6),                           # 11,030,083
)
"""Fixed perft positions and depths (counts from the classic perft suite)."""

BENCH_WEIGHTS = SHANNON_REFERENCE
"""The reference weights 100, 300, 330, 500, 900, 10."""

SIGNATURE = 21833316
"""The signature of the default settings with the Shannon reference weights (pinned by a test:
a change of the core that alters it changes the search)."""
NET11_SIGNATURE = 1824413642
"""The signature of the shipped net11 (``evotune bench --engine net11``; pinned by a test: a
change of the core's net code or search that alters it changes the net's play)."""


BENCH_KEYS = ("engine", "features", "search_nps", "reference_search_nps", "speedup", "perft_nps",
              "game_seconds_median", "signature")
"""The figures, in print order."""
SEARCH_KEYS = ("algorithm", "algorithm_nps", "simulations_per_second")
"""The figures added after them for a spec whose search is not alpha-beta."""


@dataclass(frozen=True)
class BenchSettings:
    """How much work the bench does (the defaults take well under a minute)."""

    depth: int = 7
    """Core search depth on every position of the search set (part of the signature)."""
    reference_depth: int = 3
    """Reference search depth."""
    reference_positions: int = 4
    """How many positions of the search set the reference searches."""
    perft_scale: int = 0
    """Added to each perft depth (0: the fixed depths; -2: two plies less, for a quick run)."""
    games: int = 10
    """Complete core games, from the first ``games`` openings of 2moves_v1.epd."""
    game_limits: Limits = Limits(depth=3, max_plies=400)
    """Search depth and ply cap of those games."""
    net_nodes: int = 200_000
    """A net: node limit of each core search of the search set."""
    net_game_nodes: int = 5_000
    """A net: node limit of each move of the games."""
    net_reference_nodes: int = 5_000
    """A net: node limit of each reference search."""
    search_budget: int = 0
    """A spec whose search is not alpha-beta: the nodes of each of its searches, in the search
    set and the games (UCT counts them as ``budget = "nodes"`` does, leaf searches included, so
    that deep leaves cannot outgrow it); 0: its default budget (a net's games: net_game_nodes)."""

    def __post_init__(self) -> None:
        for name in ("depth", "reference_depth", "reference_positions", "games", "net_nodes",
                     "net_game_nodes", "net_reference_nodes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"bench {name} must be a positive integer, got {value!r}")
        if isinstance(self.search_budget, bool) or not isinstance(self.search_budget, int) \
                or self.search_budget < 0:
            raise ConfigError(f"bench search_budget must be >= 0, got {self.search_budget!r}")
        if self.reference_positions > len(BENCH_FENS):
            raise ConfigError(f"bench reference_positions is at most {len(BENCH_FENS)}")
        if min(d for _, d in PERFT_POSITIONS) + self.perft_scale < 1:
            raise ConfigError("bench perft_scale makes a perft depth < 1; use -3 or more")


QUICK = BenchSettings(depth=4, reference_depth=2, reference_positions=2, perft_scale=-2, games=2,
                      game_limits=Limits(depth=2, max_plies=40), net_nodes=20_000,
                      net_game_nodes=2_000, net_reference_nodes=1_000, search_budget=20_000)
"""A few-seconds bench for tests and smoke checks (its signature differs from the default's)."""


@dataclass(frozen=True)
class BenchResult:
    """The bench figures (see the module docstring)."""

    engine: str
    """The engine spec benched (its reference weights)."""
    features: str
    """Its feature set."""
    search_nps: float
    """Core search nodes per second."""
    reference_search_nps: float
    """Reference search nodes per second."""
    speedup: float
    """search_nps / reference_search_nps."""
    perft_nps: float
    """Core perft nodes per second."""
    game_seconds_median: float
    """Median wall time of one complete core game."""
    signature: int
    """Total core nodes of the fixed search set (a net: :func:`results_signature`)."""
    algorithm: str = "alphabeta"
    """The spec's search."""
    algorithm_nps: float = 0.0
    """Nodes per second of the spec's search (its default budget per position)."""
    simulations_per_second: float = 0.0
    """UCT simulations per second (0 for the other searches)."""

    def as_dict(self) -> dict[str, float | int | str]:
        """The figures under :data:`BENCH_KEYS` (and :data:`SEARCH_KEYS` for a search other
        than alpha-beta)."""
        out = asdict(self)
        if self.algorithm == "alphabeta":
            for key in SEARCH_KEYS:
                del out[key]
        return out


def bench_openings(n: int) -> list[str]:
    """The first ``n`` positions (FEN) of the packaged 2moves_v1.epd suite."""
    lines = [ln.strip() for ln in DEFAULT_OPENINGS.read_text(encoding="utf-8").splitlines()]
    fens = [ln for ln in lines if ln and not ln.startswith("#")]
    if n > len(fens):
        raise ConfigError(f"bench games is at most {len(fens)}")
    return fens[:n]


def signature(depth: int = BenchSettings.depth, weights=BENCH_WEIGHTS,
              features: str = "shannon") -> int:
    """Total core nodes of the fixed search set at ``depth`` (the bench's ``signature``)."""
    return sum(core.search(fen, weights, depth=depth, features=features).nodes
               for fen in BENCH_FENS)


def results_signature(results) -> int:
    """A net's signature: its searches stop on the node limit, so their node count is the limit
    whatever the net; the CRC-32 of each search's move, score, completed depth and principal
    variation changes when the search or the evaluation does."""
    text = "\n".join(f"{r.move} {r.score} {r.depth} {' '.join(r.pv)}" for r in results)
    return zlib.crc32(text.encode("ascii"))


def net_signature(net, *, depth: int = BenchSettings.depth,
                  nodes: int = BenchSettings.net_nodes) -> int:
    """The bench's signature of a net (:func:`results_signature` of the search set)."""
    return results_signature([core.search(fen, net, depth=depth, nodes=nodes, features="nnue")
                              for fen in BENCH_FENS])


def run_bench(settings: BenchSettings = BenchSettings(), spec=None, *,
              weights=None) -> BenchResult:
    """Run the bench: core searches, reference searches, core perft, core games, with the
    reference weights of the engine spec ``spec`` (an EngineSpec of a builtin engine; None: the
    Shannon reference weights), or with ``weights`` (for an nnue spec: its Net)."""
    if spec is not None and spec.kind != "builtin":
        raise ConfigError(f"bench needs a builtin engine spec; '{spec.name}' is '{spec.kind}'")
    name = "shannon" if spec is None else spec.name
    features = "shannon" if spec is None else spec.features
    how = SearchSettings() if spec is None else spec.search
    if weights is None:
        if evaluation_of(features).reads_file:
            raise ConfigError(f"bench: engine spec '{name}' needs its net; give nnue:FILE")
        weights = BENCH_WEIGHTS if spec is None else spec.space().reference_array
        weights = weights[:len(weights) - len(how.weight_names())]  # the evaluation's
    net = evaluation_of(features).reads_file
    limit = settings.net_nodes if net else 0
    game_limits = replace(settings.game_limits, nodes=settings.net_game_nodes) if net \
        else settings.game_limits
    if not how.is_alphabeta and settings.search_budget:
        game_limits = replace(game_limits, nodes=settings.search_budget)
        how = replace(how, budget_unit="nodes")
    # compile or load the cache, untimed
    core.search(chess.STARTING_FEN, weights, depth=1, features=features)
    perft(chess.STARTING_FEN, 1)

    nodes = 0
    results = []
    start = time.perf_counter()
    for fen in BENCH_FENS:
        results.append(core.search(fen, weights, depth=settings.depth, nodes=limit,
                                   features=features))
        nodes += results[-1].nodes
    search_seconds = time.perf_counter() - start

    ref_nodes = 0
    start = time.perf_counter()
    for fen in BENCH_FENS[:settings.reference_positions]:
        ref_nodes += reference.search(fen, weights, depth=settings.reference_depth,
                                      nodes=settings.net_reference_nodes if net else 0,
                                      features=features).nodes
    ref_seconds = time.perf_counter() - start

    perft_nodes = 0
    start = time.perf_counter()
    for fen, depth in PERFT_POSITIONS:
        perft_nodes += perft(fen, depth + settings.perft_scale)
    perft_seconds = time.perf_counter() - start

    other_nodes, sims = nodes, 0
    start = time.perf_counter()
    if not how.is_alphabeta:
        other_nodes = 0
        for fen in BENCH_FENS:
            res = core.search(fen, weights, settings=how, features=features,
                              nodes=settings.search_budget)
            other_nodes += res.nodes
            sims += res.simulations
    other_seconds = time.perf_counter() - start if not how.is_alphabeta else search_seconds

    game_seconds = []
    for fen in bench_openings(settings.games):
        start = time.perf_counter()
        outcome = core.play_game(fen, weights, weights, limits=game_limits,
                                 features=features, settings=(how, how))
        game_seconds.append(time.perf_counter() - start)
        logger.debug("bench game from %s: %s %s, %d plies", fen, outcome.result,
                     outcome.termination, len(outcome.moves))

    search_nps = nodes / max(search_seconds, 1e-9)
    ref_nps = ref_nodes / max(ref_seconds, 1e-9)
    return BenchResult(engine=name, features=features, search_nps=search_nps, reference_search_nps=ref_nps,
                       speedup=search_nps / max(ref_nps, 1e-9),
                       perft_nps=perft_nodes / max(perft_seconds, 1e-9),
                       game_seconds_median=float(statistics.median(game_seconds)),
                       signature=results_signature(results) if net else int(nodes),
                       algorithm=how.algorithm,
                       algorithm_nps=other_nodes / max(other_seconds, 1e-9),
                       simulations_per_second=sims / max(other_seconds, 1e-9))


def format_bench(result: BenchResult) -> str:
    """The figures as aligned ``name: value`` lines."""
    lines = []
    for key, value in result.as_dict().items():
        text = value if isinstance(value, str) else f"{value:d}" if isinstance(value, int) \
            else f"{value:,.3f}" if value < 100 else f"{value:,.0f}"
        lines.append(f"{key:<22} {text}")
    return "\n".join(lines)
