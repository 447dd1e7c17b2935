"""Fixtures shared by the test files (tests take them as arguments instead of importing each other).

Engines and specs: ``fake_engine`` (the command of a scripted UCI engine in tests/fake_engines),
``fake_engine_spec`` (a tiny two-weight 'uci' spec for one), ``write_pst_spec`` (a spec with
the pst/extended feature names: hundreds of weights).
The command line: ``call_cli`` (``evotune ARGS`` in this process: exit code, stdout, stderr).
Runs: ``make_fake_run`` (a stored run made in a moment from synthetic outcomes),
``stored_generations`` and ``stored_games`` (a stored run without its wall-clock timings),
``kill_at_generation`` (SIGKILL a run's process once it reaches a generation).
Strategies: ``synthetic_oracle``, ``synthetic_optimum``, ``oracle_distance`` and ``oracle_run``
(a fast player model whose strength is a known function of its weights).
Positions: ``random_boards``, ``random_positions``, ``special_boards`` and ``search_boards``.

Fixtures that hand out a function are session-scoped, so module-scoped fixtures can use them.
"""
from __future__ import annotations

import collections
import json
import os
import random
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.cli import main
from evotune.seeding import STREAM_GAMES, generator
from evotune.space import WeightSpace
from evotune.strategies.base import GameLeaves, MatchOutcome, MatchRequest

FAKE_ENGINES = Path(__file__).resolve().parent / "fake_engines"


# ---- engines and specs --------------------------------------------------------------------------

def _fake_engine(mode: str = "random_mover", *extra: str) -> list[str]:
    return [sys.executable, str(FAKE_ENGINES / f"{mode}.py"), *extra]


@pytest.fixture(scope="session")
def fake_engine():
    """``fake_engine(mode="random_mover", *extra)``: the command (a list) that starts the
    scripted UCI engine tests/fake_engines/<mode>.py with this Python (modes: random_mover,
    crash, hang, slow, illegal; ``extra``: its flags, e.g. "--after", "2")."""
    return _fake_engine


@pytest.fixture(scope="session")
def fake_engine_spec():
    """``fake_engine_spec(folder, mode="random_mover", *extra, name="fake", knight_upper=1000,
    options="Seed = 7")``: writes ``<folder>/<name>.toml``, a tiny 'uci' spec for a scripted
    fake engine (knight -> KnightValue, mobility -> MobilityWeight, both declared 0..2000 by
    the fake), and returns its path."""

    def write(folder: Path, mode: str = "random_mover", *extra: str, name: str = "fake",
              knight_upper: int = 1000, options: str = "Seed = 7") -> Path:
        cmd = json.dumps(_fake_engine(mode, *extra))
        path = Path(folder) / f"{name}.toml"
        path.write_text(f'name = "{name}"\nkind = "uci"\ncommand = {cmd}\n[options]\n{options}\n'
                        f'[[weight]]\nname = "knight"\nreference = 300\nlower = 0\n'
                        f'upper = {knight_upper}\noption = "KnightValue"\n'
                        '[[weight]]\nname = "mobility"\nreference = 10\nlower = 0\nupper = 1000\n'
                        'option = "MobilityWeight"\n')
        return path

    return write


_PST_MATERIAL = {"mg": (100, 300, 330, 500, 900), "eg": (120, 280, 300, 520, 950)}


def _pst_weights(extra: bool = False) -> list[dict]:
    """The [[weight]] tables: material (pawn mg fixed at 100), zero tables in [-150, 150]."""
    from evotune.spec.features import PIECES, PST_SIZE, SQUARES, feature_names

    out = []
    for phase, values in _PST_MATERIAL.items():
        for piece, v in zip(PIECES[:5], values):
            w = {"name": f"material.{phase}.{piece}", "reference": v, "lower": 0, "upper": 1500}
            if phase == "mg" and piece == "pawn":
                w.update(fixed=True, lower=100, upper=100)
            out.append(w)
    for phase in ("mg", "eg"):
        for piece in PIECES:
            for sq in SQUARES:
                out.append({"name": f"pst.{phase}.{piece}.{sq}", "reference": 0,
                            "lower": -150, "upper": 150})
    if extra:
        out += [{"name": n, "reference": 10, "lower": -100, "upper": 200}
                for n in feature_names("extended")[PST_SIZE:]]
    return out


@pytest.fixture(scope="session")
def write_pst_spec():
    """``write_pst_spec(folder, name="pst-test", *, extra=False, kind="uci")``: writes an engine
    spec with many weights named by the feature-name contract (docs/internals.md) as
    ``<folder>/<name>.toml`` and returns its path (give it as --engine / SPEC).

    The weights are the engine's ``pst`` set (778: material.<mg|eg>.<piece>,
    pst.<mg|eg>.<piece>.<square>) and, with ``extra``, its ``extended`` set (the classical terms
    after it: bishop_pair.mg, passed.eg.rank2, ...). A 'uci' spec (the default) names its
    weights freely and runs ``/bin/true``, so runs are made with synthetic outcomes, not played;
    a 'builtin' spec names its feature set."""

    def write(folder: Path, name: str = "pst-test", *, extra: bool = False,
              kind: str = "uci") -> Path:
        lines = [f'name = "{name}"', f'kind = "{kind}"']
        if kind == "builtin":
            lines.append(f'features = "{"extended" if extra else "pst"}"')
        if kind == "uci":
            lines.append('command = ["/bin/true"]')
        for w in _pst_weights(extra):
            lines.append("[[weight]]")
            for k, v in w.items():
                lines.append(f"{k} = " + (f'"{v}"' if isinstance(v, str) else
                                          ("true" if v is True else str(v))))
        path = Path(folder) / f"{name}.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    return write


# ---- the command line ---------------------------------------------------------------------------

@pytest.fixture
def call_cli(capsys):
    """``call_cli(*args)``: ``evotune ARGS`` run in this process (:func:`evotune.cli.main`, as
    the console script calls it); returns (exit code, stdout, stderr)."""

    def call(*args: str) -> tuple[int, str, str]:
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return call


# ---- runs ---------------------------------------------------------------------------------------

def _make_fake_run(tmp_path, run_id="fake", *, strategy="de", population=6, generations=3,
                   seed=7, games=4, **config):
    from evotune.kinds.games.config import build_run_config
    from evotune.kinds.games.plan import plan_run
    from evotune.runs.records import Generation, MatchSummary, State
    from evotune.runs.store import Store
    from evotune.spec.file import load_engine_spec
    from evotune.strategies import make_strategy, strategy_class

    cfg = build_run_config(strategy=strategy, population=population,
                           generations=max(generations, 1), games=games, seed=seed, depth=1,
                           **config)
    store = Store.create(tmp_path, run_id, config=cfg, identity=plan_run(cfg).identity)
    space = load_engine_spec(cfg.engine).space(init_low=cfg.start.low, init_high=cfg.start.high)
    params = {"np": population, "games": games}
    if "np" not in strategy_class(strategy).PARAMS:  # spsa, cmaes: no population size
        params.pop("np")
    strat = make_strategy(strategy, space, params=params, seed=seed)
    rng = np.random.default_rng(seed)
    games_total = 0

    def write(g, stats, matches, games_gen):
        pop = np.asarray(strat.population, dtype=float)
        store.write_generation(Generation(
            generation=g, strategy=strategy, names=tuple(space.names),
            population=tuple(tuple(row) for row in pop.tolist()),
            mean=tuple(pop.mean(axis=0).tolist()), std=tuple(pop.std(axis=0).tolist()),
            matches=tuple(matches), stats=stats, games=games_gen, games_total=games_total,
            seconds=1.5, seconds_total=1.5 * g))
        store.write_state(State(generation=g, games=games_total, seconds=1.5 * g,
                                finished=g == generations, strategy=strat.state()))

    write(0, {}, [], 0)
    for g in range(1, generations + 1):
        outcomes, matches = [], []
        for req in strat.ask():
            pa = int(rng.integers(0, 2 * req.games + 1))
            outcomes.append(MatchOutcome(points_a=pa, points_b=2 * req.games - pa,
                                         games=req.games))
            matches.append(MatchSummary(a=tuple(req.a), b=tuple(req.b), tag=tuple(req.tag),
                                        points_a=pa, points_b=2 * req.games - pa,
                                        games=req.games))
        stats = strat.tell(outcomes)
        games_gen = sum(o.games for o in outcomes)
        games_total += games_gen
        write(g, stats, matches, games_gen)
    return store


@pytest.fixture(scope="session")
def make_fake_run():
    """``make_fake_run(folder, run_id="fake", *, strategy="de", population=6, generations=3,
    seed=7, games=4, **config)``: a finished stored run of ``generations`` generations, built the
    way the tuning loop stores one, with a real strategy driven by random (seeded) match outcomes
    (no game is played); ``config``: further run-config fields (engine, init_low, ...). Returns
    its Store."""
    return _make_fake_run


def _stored_generations(root: Path) -> list[dict]:
    from evotune.runs.store import Store

    out = []
    for g in Store(root).generations():
        g = g.to_json()
        g.pop("seconds"), g.pop("seconds_total")
        out.append(g)
    return out


def _stored_games(root: Path) -> list[dict]:
    from evotune.runs.store import Store

    games = Store(root).read_games()
    for r in games:
        r.pop("seconds", None)
        r.pop("move_ms", None)  # each move's thinking time: wall time too
    return games


@pytest.fixture
def toml_parses(monkeypatch):
    """Counts tomllib.loads calls (a plan parses its files once) by the first line of the text parsed."""
    counts: collections.Counter = collections.Counter()
    real = tomllib.loads

    def counting(text, *args, **kwargs):
        counts[text.lstrip().splitlines()[0] if text.strip() else ""] += 1
        return real(text, *args, **kwargs)

    monkeypatch.setattr(tomllib, "loads", counting)
    return counts


@pytest.fixture(scope="session")
def stored_generations():
    """``stored_generations(root)``: the run's generation files without their timings."""
    return _stored_generations


@pytest.fixture(scope="session")
def stored_games():
    """``stored_games(root)``: the run's game log without the games' and moves' wall times."""
    return _stored_games


def _kill_at_generation(proc: subprocess.Popen, state: Path, generation: int = 2,
                        timeout: float = 120.0) -> int | None:
    deadline, killed_at = time.time() + timeout, None
    while time.time() < deadline and proc.poll() is None:
        try:
            g = json.loads(state.read_text())["generation"]
        except (OSError, ValueError, KeyError):
            g = -1
        if g >= generation:
            os.kill(proc.pid, signal.SIGKILL)
            killed_at = g
            break
        time.sleep(0.005)
    proc.wait()
    return killed_at


@pytest.fixture(scope="session")
def kill_at_generation():
    """``kill_at_generation(proc, state, generation=2, timeout=120.0)``: SIGKILL ``proc`` as soon
    as its run's ``state.json`` reports ``generation`` or later; waits for it and returns the
    generation it was killed at (None: it ended first or timed out)."""
    return _kill_at_generation


# ---- the synthetic oracle -----------------------------------------------------------------------
# Strength (Elo) of a weight vector w: ``-k * sum(((w - w*) / scale)^2)`` over the free weights, so
# the optimum w* is known. A game between A and B is drawn from a logistic model: the expected
# score of A is ``1 / (1 + 10^(-(s_A - s_B) / 400))``, a draw takes probability
# ``draw * 2 * min(E, 1 - E)`` and the rest splits so that the expected score stays E. Colours do
# not matter. ``stop='decisive'`` is honoured game by game, exactly as the real match runner must.
#
# For TD there is a synthetic game generator: the features (white's view) walk randomly (piece
# counts change by +-1 now and then, mobility wanders), each ply's leaf features are given from
# the mover's view, and the result is drawn with P(white wins) = sigmoid(2 beta w* . phi_final)
# and no draws, so E[result in +-1] = tanh(beta w* . phi_final): TD with the same beta has w* as
# its fixed point.

OPTIMUM = (100.0, 300.0, 330.0, 500.0, 900.0, 10.0)


@dataclass(frozen=True)
class SyntheticOracle:
    """A known-strength player model and a synthetic game generator."""

    space: WeightSpace = WeightSpace()
    """The weight space (its free weights count in the strength)."""
    optimum: tuple[float, ...] = OPTIMUM
    """w*: the strongest weight vector."""
    k: float = 40.0
    """Elo lost per squared scale unit of distance."""
    scale: float = 100.0
    """Engine units per distance unit."""
    draw: float = 0.3
    """Draw propensity (0: no draws)."""
    beta: float = 0.005
    """TD games: results drawn from sigmoid(2 beta w* . phi)."""
    plies: int = 60
    """TD games: plies per game."""
    predicted_rate: float = 0.8
    """TD games: probability that the PV predicted the next move."""

    def strength(self, w) -> float:
        """Elo strength of w (0 at the optimum)."""
        free = self.space.free
        d = (np.asarray(w, dtype=np.float64)[free] - np.asarray(self.optimum)[free]) / self.scale
        return float(-self.k * np.sum(d * d))

    def game_probs(self, a, b) -> tuple[float, float, float]:
        """(win, draw, loss) probabilities of A against B."""
        e = 1.0 / (1.0 + 10.0 ** (-(self.strength(a) - self.strength(b)) / 400.0))
        pd = self.draw * 2.0 * min(e, 1.0 - e)
        return e - pd / 2.0, pd, 1.0 - e - pd / 2.0

    def match(self, req: MatchRequest, rng: np.random.Generator) -> MatchOutcome:
        """Play one request."""
        if req.record_leaves:
            return self.td_match(req, rng)
        pw, pd, _ = self.game_probs(req.a, req.b)
        pa = pb = played = 0
        for _ in range(req.games):
            u = rng.random()
            if u < pw:
                pa += 2
            elif u < pw + pd:
                pa += 1
                pb += 1
            else:
                pb += 2
            played += 1
            left = 2 * (req.games - played)
            if req.stop == "decisive" and (pa > pb + left or pa + left <= pb):
                break
        return MatchOutcome(points_a=pa, points_b=pb, games=played)

    def td_game(self, rng: np.random.Generator, *, a_white: bool, w=None) -> GameLeaves:
        """One synthetic self-play game (scores are w . phi for the player's w, or w*)."""
        w = np.asarray(self.optimum if w is None else w, dtype=np.float64)
        phi = np.zeros(6, dtype=np.int64)
        movers, scores, leaves = [], [], []
        for t in range(self.plies):
            change = rng.random(5) < 0.03
            phi[:5] += change * rng.choice((-1, 1), size=5)
            phi[5] = int(round(0.8 * phi[5] + rng.normal(0.0, 4.0)))
            white = t % 2 == 0
            view = phi if white else -phi
            movers.append(1 if white else 0)
            leaves.append(tuple(int(x) for x in view))
            scores.append(int(np.rint(w @ view)))
        z = 2.0 * self.beta * float(np.asarray(self.optimum) @ phi)
        result = 1.0 if rng.random() < 1.0 / (1.0 + np.exp(-z)) else 0.0
        predicted = tuple(bool(rng.random() < self.predicted_rate) for _ in range(self.plies - 1))
        return GameLeaves(a_white=a_white, result=result, movers=tuple(movers),
                          scores=tuple(scores), leaf_phi=np.array(leaves, dtype=np.int64),
                          predicted=predicted + (False,))

    def td_match(self, req: MatchRequest, rng: np.random.Generator) -> MatchOutcome:
        games = tuple(self.td_game(rng, a_white=g % 2 == 0, w=req.a) for g in range(req.games))
        pa = sum(int(2 * (g.result if g.a_white else 1 - g.result)) for g in games)
        return MatchOutcome(points_a=pa, points_b=2 * req.games - pa, games=req.games,
                            leaves=games)

    def play(self, requests: Sequence[MatchRequest], rng: np.random.Generator
             ) -> list[MatchOutcome]:
        """One outcome per request, in request order."""
        return [self.match(r, rng) for r in requests]


_DEFAULT_ORACLE = SyntheticOracle()


def _oracle_distance(w, *, oracle: SyntheticOracle = _DEFAULT_ORACLE) -> float:
    free = oracle.space.free
    return float(np.linalg.norm(np.asarray(w, dtype=np.float64)[free]
                                - np.asarray(oracle.optimum)[free]))


def _oracle_run(strategy, generations: int, *, seed: int = 7,
                oracle: SyntheticOracle = _DEFAULT_ORACLE) -> list[dict]:
    rng = generator(seed, STREAM_GAMES)
    teller = OracleTeller(strategy)
    stats = []
    for _ in range(generations):
        requests = strategy.ask()
        stats.append(teller.tell(strategy, requests, oracle.play(requests, rng)))
    return stats


class OracleTeller:
    """Tells a strategy the oracle's outcomes as the run loop does: with the rating model it
    asks for (:meth:`Strategy.rating_model`) fitted over every game told so far (each game of a
    request scored at its mean: the model reads only the pair's games and score sum)."""

    def __init__(self, strategy) -> None:
        from evotune.tuning.rated import RatedEvidence, model_scale
        request = strategy.rating_model()
        self.evidence = None if request is None else RatedEvidence(
            (), request=request, scale=model_scale(strategy.space))

    def tell(self, strategy, requests, outcomes) -> dict:
        if self.evidence is None:
            return strategy.tell(outcomes)
        from evotune.match.rating import GameResult
        g = strategy.generation + 1
        self.evidence.add(GameResult(key=(g, i, k, 0), a=r.a, b=r.b,
                                     score=o.points_a / (2.0 * o.games))
                          for i, (r, o) in enumerate(zip(requests, outcomes))
                          for k in range(o.games))
        rated = self.evidence.rate(requests, outcomes)
        return strategy.tell(rated, model=self.evidence.view())


@pytest.fixture(scope="session")
def synthetic_oracle():
    """The synthetic player model's class: ``synthetic_oracle()`` is the default model,
    ``synthetic_oracle(plies=30)`` one with other settings; ``.play(requests, rng)`` gives one
    MatchOutcome per request."""
    return SyntheticOracle


@pytest.fixture(scope="session")
def synthetic_optimum() -> tuple[float, ...]:
    """w*, the weights of the strongest synthetic player (the shannon reference)."""
    return OPTIMUM


@pytest.fixture(scope="session")
def oracle_distance():
    """``oracle_distance(w, *, oracle=default)``: the Euclidean distance of w to the oracle's
    optimum over the free weights (engine units)."""
    return _oracle_distance


@pytest.fixture(scope="session")
def oracle_teller():
    """``oracle_teller(strategy)``: an :class:`OracleTeller`, whose ``tell(strategy, requests,
    outcomes)`` tells with the rating model the strategy asks for, as the run loop does."""
    return OracleTeller


@pytest.fixture(scope="session")
def oracle_run():
    """``oracle_run(strategy, generations, *, seed=7, oracle=default)``: drive ``strategy`` for
    ``generations`` with the synthetic oracle; returns the stats of each generation."""
    return _oracle_run


# ---- positions ----------------------------------------------------------------------------------

SPECIAL_FENS = [
    # en passant available; castling both ways; promotions (quiet and capturing)
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "8/2P5/k7/8/8/8/1q6/6K1 w - - 0 1",
    # fifty-move clock about to expire; insufficient material one capture away
    "8/8/3k4/8/3K4/8/5R2/8 w - - 99 120",
    "8/8/3k4/8/2nK4/8/8/8 w - - 0 60",
    # mate in one for white; stalemate for black; checked side with few evasions
    "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1",
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",
    # Bxg2 leaves same-coloured bishops only (insufficient): a draw, not a won knight
    "2b1k3/8/8/8/8/8/6n1/4KB2 w - - 0 1",
    # Ra8 would mate, but it makes the halfmove clock 100 and draw checks come first
    "6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 100",
]


def _random_boards(seed: int, n: int, *, min_plies: int = 4, max_plies: int = 120
                   ) -> list[chess.Board]:
    rng = random.Random(seed)
    out: list[chess.Board] = []
    while len(out) < n:
        board = chess.Board()
        for _ in range(rng.randrange(min_plies, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        out.append(board)
    return out


def _special_boards() -> list[chess.Board]:
    boards = [chess.Board(f) for f in SPECIAL_FENS]
    # Repetition through the game history: after 1.Nf3 Nf6 2.Ng1 Ng8 3.Nf3, Black's ...Nf6
    # repeats the position after 1...Nf6.
    rep = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3"):
        rep.push_uci(uci)
    boards.append(rep)
    return boards


def _random_positions(n: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        b = chess.Board()
        for _ in range(rng.randrange(1, 120)):
            moves = list(b.legal_moves)
            if not moves:
                break
            b.push(rng.choice(moves))
            out.append(b.copy())
            if len(out) >= n:
                break
    return out


@pytest.fixture(scope="session")
def random_boards():
    """``random_boards(seed, n, *, min_plies=4, max_plies=120)``: the end positions of ``n``
    seeded random games; each Board keeps its move stack (game history)."""
    return _random_boards


@pytest.fixture(scope="session")
def random_positions():
    """``random_positions(n, seed)``: ``n`` positions, every one along seeded random games
    (varied material, checks, ep, castling)."""
    return _random_positions


@pytest.fixture(scope="session")
def special_boards():
    """``special_boards()``: fresh Boards of edge cases (en passant, castling, promotions, the
    fifty-move clock, insufficient material, mate and stalemate, a repetition in the game
    history, which is the last one)."""
    return _special_boards


@pytest.fixture(scope="session")
def search_boards() -> list[chess.Board]:
    """50 positions for search comparisons: 44 random-game ends (seed 99, under 60 plies) and
    the first six special boards. Shared by the session: do not change them (search copies)."""
    return _random_boards(99, 44, max_plies=60) + _special_boards()[:6]


# ---- the bad-input tables (tests/badinput.py) ----------------------------------------------------

@pytest.fixture(scope="session")
def read_only(tmp_path_factory):
    """A read-only folder (a read-only tmpfs: root ignores file permissions), or None when none
    can be made here."""
    mnt = tmp_path_factory.mktemp("ro")
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mnt)],
                        capture_output=True).returncode == 0
    if not ok and os.geteuid() != 0:
        os.chmod(mnt, 0o555)
        ok = True
    yield mnt if ok else None
    subprocess.run(["umount", str(mnt)], capture_output=True)


@pytest.fixture(scope="session")
def stored_run(tmp_path_factory) -> Path:
    """A finished two-generation run (the run and match tables copy and damage it)."""
    from badinput import RUN, run_cli

    base = tmp_path_factory.mktemp("stored")
    res = run_cli(["run", *RUN, "--generations", "2", "--runs-dir", str(base), "--run-id", "good"],
                  base, timeout=600)
    assert res.returncode == 0, res.stderr
    return base / "good"


SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


def slow_test_ids() -> dict[str, float]:
    """The tests tests/slow_tests.txt moves to the full suite: node id -> seconds measured."""
    ids = {}
    for line in SLOW_LIST.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            seconds, _, nodeid = line.partition(" ")
            ids[nodeid] = float(seconds)
    return ids


def pytest_collection_modifyitems(config, items):
    """Mark slow the tests listed in tests/slow_tests.txt (each measured at 3 s or more), so the
    README's fast set (``-m "not slow"``) stays within CI's 15 minutes on 2 cores."""
    ids = slow_test_ids()
    for item in items:
        if item.nodeid in ids:
            item.add_marker(pytest.mark.slow)
