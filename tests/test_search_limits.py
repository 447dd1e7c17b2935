"""Issue 60, searches that do not stop: every search honours every limit at every level (node
limits, time, ``stop`` and the end of input inside UCT's leaf searches, the probability search
and quiescence), and ``evotune uci`` answers ``go nodes 1``, ``stop`` and ``isready`` at once in
every state. The latencies asserted here are generous (the test machine is shared); the real
measure is benchmarks/stop_latency.py, which prints them per search."""
from __future__ import annotations

import os
import queue
import threading
import time
from pathlib import Path

import chess
import numpy as np
import pytest

from evotune.engine import search
from evotune.engine.core.search import QNODES
from evotune.engine.net.network import random_net, write_net
from evotune.engine.uci.commands import LEAST, parse_go
from evotune.engine.uci.frontend import UciEngine
from evotune.spec.file import load_engine_spec
from evotune.spec.searchsettings import SearchSettings

ROOT = Path(__file__).resolve().parent.parent
ARTEFACTS = ROOT / "docs" / "results" / "artefacts" / "move-model"
MIDDLEGAME = "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1"  # BK.05
SHANNON_WEIGHTS = "".join(f'[[weight]]\nname = "{n}"\nreference = {v}\n' for n, v in zip(
    ("pawn", "knight", "bishop", "rook", "queen", "mobility"), (100, 300, 330, 500, 900, 10)))
"""The Shannon reference weights as a spec's [[weight]] tables."""
POSITIONS = (("startpos", "position startpos"), ("middlegame", f"position fen {MIDDLEGAME}"))
GO_NODES_1 = 8.0
"""Seconds 'go nodes 1' may take here (the issue's target is 2 s: the benchmark measures it)."""
STOP = 1.5
"""Seconds from 'stop' to 'bestmove' here (the target is 0.2 s)."""
W = (100, 300, 330, 500, 900, 10)


class Lines:
    """A text sink for UciEngine: each line written, with the time it came."""

    def __init__(self) -> None:
        self.lines: queue.Queue = queue.Queue()
        self.all: list[str] = []

    def write(self, text: str) -> None:
        for line in text.splitlines():
            self.lines.put((time.perf_counter(), line))
            self.all.append(line)

    def flush(self) -> None:
        pass


class Session:
    """``evotune uci`` in this process: its protocol loop on a pipe, as a GUI drives it."""

    def __init__(self, **kwargs) -> None:
        self.out = Lines()
        read, self._write = os.pipe()
        self.engine = UciEngine(out=self.out, **kwargs)
        stdin = os.fdopen(read, "r")
        self.thread = threading.Thread(target=self.engine.run, args=(stdin,), daemon=True)
        self.thread.start()

    def send(self, line: str) -> float:
        os.write(self._write, (line + "\n").encode())
        return time.perf_counter()

    def expect(self, prefix: str, timeout: float) -> tuple[float, str]:
        """The time and text of the next line starting with ``prefix``; fails after timeout."""
        end = time.perf_counter() + timeout
        while True:
            try:
                at, line = self.out.lines.get(timeout=max(0.0, end - time.perf_counter()))
            except queue.Empty:
                pytest.fail(f"no '{prefix}' within {timeout} s; got {self.out.all[-5:]}")
            if line.startswith(prefix):
                return at, line

    def latency(self, line: str, prefix: str, timeout: float) -> float:
        sent = self.send(line)
        at, _ = self.expect(prefix, timeout)
        return at - sent

    def close(self) -> None:
        self.send("quit")
        self.thread.join(30)
        os.close(self._write)
        assert not self.thread.is_alive(), "quit did not end the protocol loop"


def legal(line: str, board: chess.Board) -> bool:
    return chess.Move.from_uci(line.split()[1]) in board.legal_moves


def spec_file(tmp_path: Path, name: str, search_table: str, *, features: str = "shannon") -> Path:
    """A builtin spec of ``features`` (its default weights) searching by ``search_table``."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\nkind = "builtin"\nfeatures = "{features}"\n'
                    f'[search]\n{search_table}\n' + SHANNON_WEIGHTS * (features == "shannon"))
    return path


@pytest.fixture(scope="module")
def flat_net(tmp_path_factory) -> Path:
    """A random net: it values nothing, so its quiescence finds few cut-offs."""
    path = tmp_path_factory.mktemp("net") / "flat.nnue"
    write_net(random_net(16, 1), path)
    return path


def check_limits(session: Session, *, go_nodes_1: float = GO_NODES_1, stop: float = STOP):
    """From each position: 'go nodes 1' answers a legal move in time, and so does 'stop' after
    0.3 s of 'go infinite'; returns the worst (go nodes 1, stop) seconds."""
    worst = [0.0, 0.0]
    session.latency("isready", "readyok", 600)  # the core's code loaded (compiled at worst)
    for _, position in POSITIONS:
        board = chess.Board() if position.endswith("startpos") else chess.Board(MIDDLEGAME)
        session.send(position)
        sent = session.send("go nodes 1")
        at, line = session.expect("bestmove", 600)
        assert legal(line, board), line
        worst[0] = max(worst[0], at - sent)
        session.send("go infinite")
        time.sleep(0.3)
        sent = session.send("stop")
        at, line = session.expect("bestmove", 60)
        assert legal(line, board), line
        worst[1] = max(worst[1], at - sent)
    assert worst[0] < go_nodes_1 and worst[1] < stop, worst
    return worst


# ---- one of each family (fast) --------------------------------------------------------------------

FAMILIES = {
    "alphabeta": lambda tmp, net: dict(spec=load_engine_spec("shannon")),
    "alphabeta-net-model-reductions": lambda tmp, net: dict(
        spec=load_engine_spec(str(ARTEFACTS / "reduce-model.toml"))),
    "alphabeta-flat-net": lambda tmp, net: dict(spec=load_engine_spec("nnue"), net=net),
    "uct-qsearch": lambda tmp, net: dict(spec=load_engine_spec("shannon-uct")),
    "uct-alphabeta8": lambda tmp, net: dict(spec=load_engine_spec(str(spec_file(
        tmp, "uct-ab8", 'algorithm = "uct"\npolicy = "alphabeta:8"')))),
    "uct-qsearch-flat-net": lambda tmp, net: dict(spec=load_engine_spec(str(spec_file(
        tmp, "uct-net", 'algorithm = "uct"\npolicy = "qsearch"', features="nnue"))), net=net),
    "puct-net-model": lambda tmp, net: dict(spec=load_engine_spec("net11-puct-moves")),
    "probability-net-model": lambda tmp, net: dict(spec=load_engine_spec("net11-probability-moves")),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_go_nodes_1_and_stop_answer_at_once(family, tmp_path, flat_net):
    session = Session(**FAMILIES[family](tmp_path, flat_net))
    try:
        check_limits(session)
    finally:
        session.close()


# ---- every shipped search, every UCT policy (slow) ----------------------------------------------

SHIPPED = sorted(p.stem for p in (ROOT / "evotune" / "engines").glob("*.toml")
                 if 'kind = "builtin"' in p.read_text() and p.stem != "nnue")
POLICIES = ("random", "eval", "qsearch", "alphabeta:2", "alphabeta:8")


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_search_answers_go_nodes_1_and_stop(name):
    session = Session(spec=load_engine_spec(name))
    try:
        check_limits(session)
    finally:
        session.close()


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["false", "true"])
@pytest.mark.parametrize("policy", POLICIES)
def test_uct_answers_with_every_policy_and_a_simulation_budget(policy, prior, tmp_path):
    """A spec whose budget is in simulations: 'go nodes 1' still counts nodes, as UCI says, so
    a depth-8 leaf (millions of nodes to its end: 11 s from BK.05 when 'go nodes' counted
    simulations) stops at the first; 'stop' cuts it at once."""
    table = f'algorithm = "uct"\npolicy = "{policy}"\nprior = {prior}'
    spec = load_engine_spec(str(spec_file(tmp_path, "uct", table)))
    session = Session(spec=spec)
    try:
        check_limits(session)
    finally:
        session.close()


# ---- the core: quiescence, UCT's leaves ---------------------------------------------------------

def test_a_flat_evaluation_cannot_grow_a_quiescence_search_past_its_bound(flat_net):
    """A random net finds few cut-offs: without the bound one quiescence search of BK.22 took
    16,200 nodes and a depth-4 search of four bench positions 94.6 million nodes (99 s); past
    QNODES nodes a quiescence search's nodes stand pat."""
    from evotune.engine.net.network import read_net
    net = read_net(flat_net)
    r = search(MIDDLEGAME, net, depth=2, features="nnue")
    assert r.move and r.nodes < 40 * 40 * (QNODES + 200)
    # the bound is far from what a real evaluation's quiescence reaches: the pinned bench
    # signatures (tests/test_bench.py) do not move, nor does a deep search with the linear set
    assert search(MIDDLEGAME, W, depth=6).nodes == search(MIDDLEGAME, W, depth=6).nodes


def test_a_uct_node_budget_binds_its_leaf_searches():
    """budget = "nodes": the leaf search of the simulation that reaches the budget stops there
    (the simulation is dropped; the first stands in by its evaluation), so a depth-8 leaf of
    millions of nodes does not pass a budget of 1,000."""
    settings = SearchSettings(algorithm="uct", policy="alphabeta", policy_depth=8,
                              budget_unit="nodes")
    t0 = time.perf_counter()
    r = search(MIDDLEGAME, W, nodes=1000, settings=settings)
    assert r.move and r.nodes <= 1000 + 64 and r.simulations >= 1
    one = search(MIDDLEGAME, W, nodes=1, settings=settings)
    assert one.move and one.simulations == 1 and one.nodes <= 64
    assert time.perf_counter() - t0 < 30


def test_the_stop_flag_ends_a_probability_search_and_a_uct_qsearch_leaf(flat_net):
    from evotune.engine.net.network import read_net
    net = read_net(flat_net)
    for settings in (SearchSettings(algorithm="probability", factor=0.01),
                     SearchSettings(algorithm="uct", policy="qsearch")):
        stop = np.zeros(1, dtype=np.int64)
        timer = threading.Timer(0.3, stop.__setitem__, (0, 1))
        timer.start()
        t0 = time.perf_counter()
        r = search(MIDDLEGAME, net, nodes=10**9, features="nnue", settings=settings, stop=stop)
        assert r.move and time.perf_counter() - t0 < 0.3 + STOP, settings.algorithm


# ---- the protocol: go, isready ------------------------------------------------------------------

def test_every_go_gets_a_legal_bestmove_and_a_bad_one_one_info_string():
    assert parse_go(["nodes", "5"], chess.WHITE).nodes == 5
    for bad in (["nodes", "0"], ["nodes", "99999999999999"], ["nodes", "-3"], ["movetime", "0"],
                ["depth", "0"], ["nodes"], ["sideways"], ["wtime", "1e3"], ["mate", "0"]):
        with pytest.raises(ValueError):
            parse_go(bad, chess.WHITE)
    assert parse_go([], chess.WHITE).infinite and LEAST.nodes == 1
    for spec in ("shannon", "shannon-uct", "net11-puct-moves"):
        session = Session(spec=load_engine_spec(spec))
        try:
            session.latency("isready", "readyok", 600)
            for go in ("go nodes 0", "go nodes 99999999999999", "go movetime 0", "go nodes abc",
                       "go sideways", "go depth"):
                start = len(session.out.all)
                session.send(go)
                _, line = session.expect("bestmove", 60)
                assert legal(line, chess.Board()), (spec, go, line)
                said = [x for x in session.out.all[start:] if x.startswith("info string error")]
                assert len(said) == 1 and "searching depth 1, nodes 1" in said[0], (go, said)
        finally:
            session.close()


def test_a_bare_go_searches_until_stop():
    session = Session(spec=load_engine_spec("shannon"))
    try:
        session.latency("isready", "readyok", 600)
        session.send("go")
        with pytest.raises(pytest.fail.Exception):
            session.expect("bestmove", 1.0)
        assert session.latency("stop", "bestmove", 30) < STOP
    finally:
        session.close()


def test_isready_is_answered_during_a_search_and_behind_a_second_go():
    """Any engine: 'isready' sent while a 'go' waits for the search before it (UCI: a GUI may
    ping a searching engine) is answered at once, not after 'stop'."""
    session = Session(spec=load_engine_spec("shannon"))
    try:
        session.latency("isready", "readyok", 600)
        session.send("go depth 64")
        time.sleep(0.2)
        assert session.latency("isready", "readyok", 30) < STOP
        session.send("go depth 5")  # waits for the first search, which runs on
        time.sleep(0.2)
        assert session.latency("isready", "readyok", 30) < STOP
        session.send("stop")
        first = session.expect("bestmove", 30)
        second = session.expect("bestmove", 60)
        assert second[0] >= first[0]
        assert session.latency("isready", "readyok", 30) < STOP  # no readyok left over
        assert session.out.all.count("readyok") == 4
    finally:
        session.close()


def test_the_warm_up_never_outgrows_loading_the_code(tmp_path):
    """UCT with depth-8 alpha-beta leaves and a simulation budget: the warm-up searched 64
    simulations (minutes) and 'isready', 'go', 'stop' and 'quit' waited behind it. Its search
    is now a 64-node one: 'isready' waits for the code alone."""
    spec = load_engine_spec(str(spec_file(tmp_path, "uct-ab8",
                                          'algorithm = "uct"\npolicy = "alphabeta:8"')))
    search(chess.STARTING_FEN, W, nodes=1, settings=SearchSettings(
        algorithm="uct", policy="alphabeta", policy_depth=1))  # this process's code loaded
    session = Session(spec=spec)
    try:
        assert session.latency("isready", "readyok", 60) < 10
        session.send("go movetime 300")
        session.expect("bestmove", 10)
        session.send("go infinite")
        time.sleep(0.3)
        assert session.latency("stop", "bestmove", 30) < STOP
    finally:
        session.close()


def test_a_match_of_deep_uct_leaves_counted_in_simulations_says_so_first(tmp_path):
    """`match SPEC shannon --nodes 50 --depth 1` of a UCT spec with depth-8 alpha-beta leaves
    printed nothing for minutes (50 simulations a move, each a whole depth-8 search): one note
    says what --nodes counts there and how to count nodes; a budget in nodes, shallow leaves
    and alpha-beta players get none."""
    from evotune.limits import Limits
    from evotune.match.resolve import limit_notes, resolve_player

    def player(name, table):
        return resolve_player(str(spec_file(tmp_path, name, table)))

    deep = player("ab8", 'algorithm = "uct"\npolicy = "alphabeta:8"')
    notes = limit_notes(Limits(nodes=50, depth=1), (deep, resolve_player("shannon"), deep))
    assert len(notes) == 1 and notes[0].startswith("ab8 searches 50 simulations a move, each "
                                                   "leaf a depth-8 alpha-beta search")
    assert 'budget = "nodes"' in notes[0]
    quiet = (player("ab8n", 'algorithm = "uct"\npolicy = "alphabeta:8"\nbudget = "nodes"'),
             player("ab2", 'algorithm = "uct"\npolicy = "alphabeta:2"'),
             resolve_player("shannon-uct"), resolve_player("shannon"))
    assert limit_notes(Limits(nodes=50, depth=1), quiet) == []
