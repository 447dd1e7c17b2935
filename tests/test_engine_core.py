"""The numba engine core: perft, hashing, phi, draw rules, games, mate scores, limits, errors, cache."""
from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import chess.polyglot
import numpy as np
import pytest

from evotune.cli import main
from evotune.engine import MATE, Adjudication, evaluate, features, perft, perft_divide, play_game, search
from evotune.engine.api import board_arrays, decode_move
from evotune.engine.core import layout as T
from evotune.engine.core.position import compute_hash, make_move, unmake_move
from evotune.engine.perftsuite import perft_suite
from evotune.errors import ConfigError, PositionError, WeightsError
from evotune.limits import Limits

DATA = Path(__file__).parent / "data"
SUITE = DATA / "perftsuite.epd"
REF = [100, 300, 330, 500, 900, 10]
START = chess.STARTING_FEN
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


# ---- attacks -----------------------------------------------------------------------------------

def test_slider_attacks_equal_python_chess_on_every_square():
    """The kindergarten lookups against python-chess's attack tables: every square, random
    occupancies from sparse to dense (the slider's own square set or not)."""
    from evotune.engine.core.attacks import bishop_attacks, rook_attacks

    rng = random.Random(7)
    checked = 0
    for sq in range(64):
        for k in range(120):
            occ = rng.getrandbits(64)
            for _ in range(k % 4):
                occ &= rng.getrandbits(64)
            if k % 2:
                occ |= 1 << sq
            rook = (chess.BB_RANK_ATTACKS[sq][chess.BB_RANK_MASKS[sq] & occ]
                    | chess.BB_FILE_ATTACKS[sq][chess.BB_FILE_MASKS[sq] & occ])
            bishop = chess.BB_DIAG_ATTACKS[sq][chess.BB_DIAG_MASKS[sq] & occ]
            assert int(rook_attacks(sq, np.uint64(occ))) == rook, (sq, hex(occ))
            assert int(bishop_attacks(sq, np.uint64(occ))) == bishop, (sq, hex(occ))
            checked += 1
    assert checked == 64 * 120


# ---- perft -------------------------------------------------------------------------------------

def test_perft_suite_up_to_a_million_nodes():
    checks = perft_suite(SUITE, max_nodes=1_000_000)
    assert len(checks) > 600
    bad = [c for c in checks if not c.ok]
    assert not bad, bad[:5]


@pytest.mark.slow
def test_perft_suite_every_entry():
    checks = perft_suite(SUITE, max_nodes=10**12)
    bad = [c for c in checks if not c.ok]
    assert not bad, bad[:5]


@pytest.mark.parametrize("fen,depth,count", [
    (START, 5, 4865609),
    (KIWIPETE, 4, 4085603),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 674624),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 4, 422333),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3, 62379),
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 3, 89890),
    # en passant that would expose the king along the rank is illegal
    ("8/8/8/KPp4r/8/8/8/4k3 w - c6 0 1", 1, 4),
])
def test_perft_spot_values(fen, depth, count):
    assert perft(fen, depth) == count


def test_perft_divide_matches_python_chess_moves(random_positions):
    for b in random_positions(60, seed=3):
        if b.is_game_over():
            continue
        div = perft_divide(b, 1)
        assert set(div) == {m.uci() for m in b.legal_moves}
        assert all(v == 1 for v in div.values())


# ---- hashing and phi -------------------------------------------------------------------------------

def test_zobrist_equals_polyglot_incrementally():
    rng = random.Random(11)
    for _game in range(30):
        board = chess.Board()
        U, S = board_arrays(board, 10)
        played = []
        for _ in range(rng.randrange(20, 160)):
            legal = list(board.legal_moves)
            if not legal:
                break
            div = perft_divide(board, 1)
            assert set(div) == {m.uci() for m in legal}
            move = rng.choice(legal)
            # the core's own encoding of the move (flags included), from its move list
            m = _core_move(U, S, move)
            make_move(U, S, m)
            board.push(move)
            played.append(m)
            assert int(U[T.U_HASH]) == chess.polyglot.zobrist_hash(board)
            assert int(compute_hash(U, S)) == chess.polyglot.zobrist_hash(board)
        for m in reversed(played):
            unmake_move(U, S, m)
            board.pop()
        assert int(U[T.U_HASH]) == chess.polyglot.zobrist_hash(board)
        assert int(compute_hash(U, S)) == chess.polyglot.zobrist_hash(board)


def _core_move(U, S, move: chess.Move) -> int:
    from evotune.engine.core.movegen import gen_legal
    n = gen_legal(U, S, np.int64(0), False)
    for m in S[T.S_MOVES:T.S_MOVES + n]:
        if decode_move(int(m)) == move:
            return int(m)
    raise AssertionError(f"core does not generate {move}")


def _phi_direct(board: chess.Board) -> np.ndarray:
    """internals.md's definition, computed straight from python-chess."""
    us, them = board.turn, not board.turn
    out = [len(board.pieces(t, us)) - len(board.pieces(t, them)) for t in range(1, 6)]

    def mob(side):
        return sum(len(board.attacks(sq) & ~chess.SquareSet(board.occupied_co[side]))
                   for t in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
                   for sq in board.pieces(t, side))
    out.append(mob(us) - mob(them))
    return np.array(out, dtype=np.int64)


def test_phi_equals_python_chess_on_random_positions(random_positions):
    boards = random_positions(1200, seed=7)
    w = np.array([100, 280.4, 330.6, 500, 900, 9.5])
    for b in boards:
        phi = features(b)
        assert phi.dtype == np.int64 and phi.shape == (6,)
        assert np.array_equal(phi, _phi_direct(b)), b.fen()
    for b in boards[:100]:
        assert evaluate(b, w) == int(np.rint(w).astype(np.int64) @ _phi_direct(b))


def test_phi_hand_computed():
    b = chess.Board("4k3/8/8/8/8/5N2/8/6K1 w - - 0 1")
    # knight f3: d2 d4 e1 e5 g5 h4 h2 g1(own king) -> 7; king g1: f1 f2 g2 h1 h2 -> 5
    # black king e8: d8 f8 d7 e7 f7 -> 5
    assert features(b).tolist() == [0, 1, 0, 0, 0, 7 + 5 - 5]


# ---- draw rules --------------------------------------------------------------------------------

def _board_with_moves(moves: str) -> chess.Board:
    b = chess.Board()
    for m in moves.split():
        b.push_uci(m)
    return b


def test_threefold_from_game_history_ends_the_game():
    b = _board_with_moves("g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8")
    assert b.is_repetition(3)
    g = play_game(b, REF, REF, limits=Limits(depth=2))
    assert g.moves == () and g.termination == "repetition" and g.result == "1/2-1/2"


def test_search_sees_repetition_against_game_history():
    # black, a queen down, can return to a position of the game history: a draw (0)
    b = chess.Board("7k/8/8/8/8/8/8/3QK3 w - - 0 1")
    for mv in ("d1d2", "h8g8", "d2d1"):
        b.push_uci(mv)
    for depth in (1, 2, 3):
        r = search(b, REF, depth=depth)
        assert (r.move, r.score) == ("g8h8", 0), depth
    fresh = search(chess.Board(b.fen()), REF, depth=3)
    assert fresh.score < -800


def test_fifty_move_rule_and_mate_on_the_hundredth_halfmove():
    g = play_game("8/8/8/4k3/8/8/8/4K2R w - - 100 80", REF, REF, limits=Limits(depth=2))
    assert g.moves == () and g.termination == "fifty-move"
    g = play_game("8/8/8/4k3/8/8/8/4K2R w - - 99 80", REF, REF, limits=Limits(depth=2))
    assert len(g.moves) == 1 and g.termination == "fifty-move" and g.result == "1/2-1/2"
    # checkmate on the hundredth halfmove is checkmate, not a fifty-move draw
    g = play_game("R6k/8/6K1/8/8/8/8/8 b - - 100 80", REF, REF, limits=Limits(depth=2))
    assert g.moves == () and g.termination == "checkmate" and g.result == "1-0"
    # inside the search the draw checks come first (internals.md): every non-zeroing move
    # from halfmove 99 scores 0, even the mate
    assert search("7k/R7/6K1/8/8/8/8/8 w - - 99 80", REF, depth=2).score == 0
    assert search("7k/R7/6K1/8/8/8/8/8 w - - 98 80", REF, depth=2).score == MATE - 1


def test_insufficient_material_and_stalemate():
    g = play_game("8/8/8/4k3/8/8/8/4K1N1 w - - 0 1", REF, REF, limits=Limits(depth=2))
    assert g.termination == "insufficient-material" and g.moves == ()
    # capturing the last pawn would leave K+N v K: the search scores it 0 and avoids it
    r = search("8/8/8/4k3/8/8/3p4/4K1N1 w - - 0 1", REF, depth=2)
    assert r.move != "e1d2" and r.score > 0
    g = play_game("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", REF, REF, limits=Limits(depth=2))
    assert g.termination == "stalemate" and g.result == "1/2-1/2" and g.moves == ()
    r = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", REF, depth=2)
    assert r.move == "" and r.score == 0 and r.pv == ()


# ---- games -------------------------------------------------------------------------------------

def test_game_replays_legally_with_the_same_ending():
    openings = [line.strip() for line in (Path(__file__).parent.parent / "evotune" / "data"
                                          / "2moves_v1.epd").read_text().splitlines()[:6]]
    w2 = [100, 310, 320, 480, 950, 5]
    for fen in openings:
        g = play_game(fen, REF, w2, limits=Limits(depth=2, max_plies=300))
        b = chess.Board(fen)
        for mv in g.moves:
            assert chess.Move.from_uci(mv) in b.legal_moves
            b.push_uci(mv)
        assert len(g.scores) == len(g.moves) == len(g.leaf_phi) == len(g.predicted)
        assert g.nodes > 0 and g.seconds > 0
        term = g.termination
        if term == "checkmate":
            assert b.is_checkmate() and g.result == ("0-1" if b.turn == chess.WHITE else "1-0")
        elif term == "stalemate":
            assert b.is_stalemate()
        elif term == "insufficient-material":
            assert b.is_insufficient_material()
        elif term == "fifty-move":
            assert b.halfmove_clock >= 100
        elif term == "repetition":
            assert b.is_repetition(3)
        else:
            assert term == "ply-cap" and len(g.moves) == 300
        if term != "checkmate":
            assert g.result == "1/2-1/2"
        # each move's score is the score of an independent search of that position
        for t in (0, 7, 20):
            if t < len(g.moves):
                pos = chess.Board(fen)
                for mv in g.moves[:t]:
                    pos.push_uci(mv)
                w = REF if pos.turn == chess.WHITE else w2
                assert search(pos, w, depth=2).score == g.scores[t]


def test_game_is_deterministic_and_leaf_phi_explains_scores():
    fen = "rnbqkbnr/pppp1ppp/8/4p3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2"
    g1 = play_game(fen, REF, REF, limits=Limits(depth=3, max_plies=120))
    g2 = play_game(fen, REF, REF, limits=Limits(depth=3, max_plies=120))
    assert g1.moves == g2.moves and np.array_equal(g1.scores, g2.scores)
    assert np.array_equal(g1.leaf_phi, g2.leaf_phi)
    w = np.array(REF, dtype=np.int64)
    quiet = [t for t in range(len(g1.moves)) if abs(g1.scores[t]) < MATE - 1000]
    explained = sum(int(w @ g1.leaf_phi[t]) == g1.scores[t] for t in quiet)
    # draws by repetition in the PV are the only exceptions
    assert explained >= len(quiet) - 3
    assert not g1.predicted[-1]
    assert g1.predicted.sum() > 0


def test_adjudication_resign_and_draw():
    # white has an extra queen: black resigns after 2 own moves at <= -500
    fen = "4k3/8/8/8/8/8/3QPPP1/4K3 w - - 0 1"
    g = play_game(fen, REF, REF, limits=Limits(depth=2, adjudication=Adjudication(resign_score=500,
                                                                     resign_moves=2)))
    assert g.termination == "adjudication-resign" and g.result == "1-0"
    assert len(g.moves) == 4
    g = play_game(START, REF, REF, limits=Limits(depth=2, adjudication=Adjudication(draw_score=1000,
                                                                       draw_moves=3,
                                                                       draw_start_ply=4)))
    assert g.termination == "adjudication-draw" and len(g.moves) == 10


# ---- mate scores -----------------------------------------------------------------------------------

def test_mate_scores_by_distance():
    r = search("7k/R7/6K1/8/8/8/8/8 w - - 0 1", REF, depth=1)
    assert r.score == MATE - 1 and r.move == "a7a8"
    r = search("7k/R7/6K1/8/8/8/8/8 w - - 0 1", REF, depth=4)
    assert r.score == MATE - 1 and r.move == "a7a8"
    for depth in (3, 4):
        r = search("r5k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1", REF, depth=depth)
        assert r.score == MATE - 3 and r.move == "e2e8", depth
    # the mated side sees the negative distance
    r = search("r3R1k1/5ppp/8/8/8/8/5PPP/4R1K1 b - - 1 1", REF, depth=3)
    assert r.score == -(MATE - 2) and r.move == "a8e8"


# ---- limits ----------------------------------------------------------------------------------

def test_node_limit_is_respected():
    r = search(KIWIPETE, REF, depth=12, nodes=20_000)
    assert r.nodes == 20_000 and 1 <= r.depth < 12 and r.move
    assert r.move == r.pv[0]
    full = search(KIWIPETE, REF, depth=r.depth)
    assert (full.move, full.score) == (r.move, r.score)
    # the first iteration always completes
    r = search(KIWIPETE, REF, depth=5, nodes=1)
    assert r.depth == 1 and r.move and r.nodes > 1


def test_stop_flag_stops_a_search_in_another_thread():
    stop = np.zeros(1, dtype=np.int64)
    out = {}
    th = threading.Thread(target=lambda: out.setdefault("r", search(KIWIPETE, REF, depth=40,
                                                                    stop=stop)))
    th.start()
    time.sleep(0.3)
    stop[0] = 1
    th.join(timeout=10)
    assert not th.is_alive()
    assert out["r"].move and out["r"].depth < 40


def _fields(r):
    return (r.move, r.score, r.depth, r.nodes, r.pv)


@pytest.mark.parametrize("which", ["shannon", "pst-pesto", "net11"])
def test_iterate_yields_each_depth_of_one_search(which):
    """iterate() continues one search iteration by iteration: its d-th result is search()'s to
    depth d, nodes included (the shallower iterations are not searched again); with a node
    limit its last result is the deepest iteration search() completes under the same limit."""
    from evotune.engine import iterate
    from evotune.players.nets import evaluation
    from evotune.players.spec import player_from_engine_spec
    from evotune.spec.file import load_engine_spec

    spec = load_engine_spec(which)
    w = evaluation(player_from_engine_spec(spec))
    fs = spec.features
    for fen in (KIWIPETE, "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1"):
        steps = list(iterate(fen, w, depth=5, features=fs))
        assert [r.depth for r in steps] == [1, 2, 3, 4, 5]
        assert all(a.nodes < b.nodes for a, b in zip(steps, steps[1:]))
        for r in steps:
            assert _fields(r) == _fields(search(fen, w, depth=r.depth, features=fs))
        limited = list(iterate(fen, w, depth=64, nodes=30_000, features=fs))
        whole = search(fen, w, depth=64, nodes=30_000, features=fs)
        last = limited[-1]  # its nodes: to the end of its iteration; search()'s: to the stop
        assert (last.move, last.score, last.depth, last.pv) == (whole.move, whole.score,
                                                                whole.depth, whole.pv)
        assert last.nodes < whole.nodes == 30_000 and whole.depth < 64
        assert [r.depth for r in limited] == list(range(1, whole.depth + 1))


def test_iterate_stopped_before_it_starts():
    """A set stop flag: a linear evaluation's first iteration completes, then the search ends;
    a net's first iteration cut short (a node limit inside it) gives search()'s legal move at
    depth 0; a mated side gets one result without a move;
    another search than alpha-beta is refused."""
    from evotune.engine import iterate
    from evotune.engine.net.network import read_net
    from evotune.paths import ENGINES_DIR
    from evotune.spec.searchsettings import SearchSettings

    stop = np.ones(1, dtype=np.int64)
    (r,) = iterate(KIWIPETE, REF, depth=10, stop=stop)
    assert r.depth == 1 and r.move == search(KIWIPETE, REF, depth=1).move
    net = read_net(ENGINES_DIR / "net11.nnue")
    (r,) = iterate(KIWIPETE, net, depth=10, nodes=50, features="nnue")
    assert r.depth == 0 and chess.Move.from_uci(r.move) in chess.Board(KIWIPETE).legal_moves
    assert r.move == search(KIWIPETE, net, depth=10, nodes=50, features="nnue").move
    mated = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
    (r,) = iterate(mated, REF, depth=4)
    assert r.move == "" and r.score == -MATE and r.pv == ()
    with pytest.raises(ConfigError, match="iterate\\(\\) runs alpha-beta"):
        next(iterate(KIWIPETE, REF, settings=SearchSettings(algorithm="probability")))


# ---- input errors ----------------------------------------------------------------------------

def test_startpos_names_the_initial_position_as_in_uci():
    assert perft("startpos", 3) == perft(START, 3) == 8902
    a, b = search(" startpos ", REF, depth=3), search(START, REF, depth=3)
    assert (a.move, a.score, a.nodes, a.pv) == (b.move, b.score, b.nodes, b.pv)
    with pytest.raises(PositionError, match="or 'startpos'"):
        search("startpos moves e2e4", REF)


def test_bad_input_raises_library_errors():
    with pytest.raises(PositionError):
        search("not a fen", REF)
    with pytest.raises(PositionError):
        features("8/8/8/8/8/8/8/8 w - - 0 1")
    with pytest.raises(PositionError):
        perft("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra junk", 1)
    with pytest.raises(ConfigError):
        search(START, REF, depth=0)
    with pytest.raises(ConfigError):
        search(START, REF, nodes=-1)
    with pytest.raises(ConfigError):
        perft(START, 0)
    with pytest.raises(WeightsError):
        search(START, REF[:5])
    with pytest.raises(WeightsError):
        evaluate(START, [100, 300, float("nan"), 500, 900, 10])
    with pytest.raises(WeightsError):
        play_game(START, REF, [1, 2, 3])
    with pytest.raises(ConfigError, match="limits must be a Limits"):
        play_game(START, REF, REF, limits=3)  # the game's limits come whole, as one value


def test_a_game_under_limits_keeps_their_ply_cap_nodes_and_adjudication():
    """play_game reads every field of the Limits it is given that applies in the core."""
    w2 = [100, 310, 320, 480, 950, 5]
    capped = play_game(START, REF, w2, limits=Limits(depth=2, max_plies=7))
    assert len(capped.moves) == 7 and capped.termination == "ply-cap"
    counted = play_game(START, REF, w2, limits=Limits(depth=3, nodes=200, max_plies=6))
    deeper = play_game(START, REF, w2, limits=Limits(depth=3, max_plies=6))
    assert counted.nodes < deeper.nodes  # the node limit cut every search of the game
    resign = Limits(depth=2, adjudication=Adjudication(resign_score=500, resign_moves=2))
    g = play_game("4k3/8/8/8/8/8/3QPPP1/4K3 w - - 0 1", REF, REF, limits=resign)
    assert g.termination == "adjudication-resign" and len(g.moves) == 4


def test_cli_perft_search_and_errors(capsys, tmp_path):
    main(["perft", START, "3"])
    assert capsys.readouterr().out.strip() == "8902"
    main(["perft", "startpos", "3"])
    assert capsys.readouterr().out.strip() == "8902"
    main(["perft", START, "1", "--divide"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 21 and lines[-1] == "total: 20" and "e2e4: 1" in lines
    main(["search", KIWIPETE, "--depth", "2", "--weights", "100,300,330,500,900,10"])
    out = capsys.readouterr().out
    assert out.startswith("bestmove ") and " depth 2 " in out and " pv " in out
    suite = tmp_path / "s.epd"
    suite.write_bytes(b"4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66\r\n"
                      + START.encode() + b" ;D1 20 ;D2 401 ;D5 4865609\r\n")
    with pytest.raises(SystemExit) as exc:
        main(["perft", "--suite", str(suite), "--max-nodes", "1000"])
    assert exc.value.code == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == "3 passed, 1 failed" and "401" in out[0]
    for argv in (["search", "nonsense fen"], ["perft", START, "0"],
                 ["search", START, "--weights", "1,2,3"], ["search", START, "--depth", "0"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("evotune: error:") and len(err.strip().splitlines()) == 1
        assert "Traceback" not in err


# ---- numba cache -----------------------------------------------------------------------------------

_CACHE_SCRIPT = """
import evotune.engine as e
from evotune.limits import Limits
r = e.search("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
             [100, 300, 330, 500, 900, 10], depth=4)
g = e.play_game("rnbqkbnr/pppp1ppp/8/4p3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
                [100, 300, 330, 500, 900, 10], [100, 320, 300, 500, 900, 12],
                limits=Limits(depth=2, max_plies=60))
print(r.move, r.score, r.nodes, " ".join(r.pv),
      e.perft("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 3))
KIWI = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
print(" ".join(g.moves), g.result, g.termination, g.nodes, list(e.features(KIWI)))
"""


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_numba_cache_compile_then_load_gives_identical_results(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    outs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT], env=env, capture_output=True,
                           text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        outs.append(p.stdout)
    assert outs[0] == outs[1]
    assert any((tmp_path / "numba-cache").rglob("*.nbi"))
    assert outs[0].splitlines()[0].split()[-1] == "8902" and len(outs[0].splitlines()) == 2


def test_the_cache_folder_is_keyed_on_every_core_source(tmp_path):
    """numba keys a function's cache on its own file only; evotune's folder holds a hash of all the
    core's sources (and rules.py), so an edit of any one of them selects a fresh folder."""
    import shutil

    from evotune.engine import core
    from evotune.engine.core.game import search_core

    files = core.source_files()
    names = {f.name for f in files}
    assert {"layout.py", "search.py", "position.py", "evaluate.py", "rules.py"} <= names
    # the jitted entry points cache under the folder of the current hash
    assert f"core-{core.source_hash()}" in search_core.stats.cache_path
    copies = []
    for f in files:
        shutil.copy(f, tmp_path / f.name)
        copies.append(tmp_path / f.name)
    assert core.source_hash(copies) == core.source_hash()
    for f in copies:
        before = core.source_hash(copies)
        f.write_text(f.read_text() + "\n# edited\n")
        assert core.source_hash(copies) != before, f.name


def test_old_cache_folders_are_pruned_keeping_the_most_recent(tmp_path):
    import os

    from evotune.engine import core

    for i in range(5):
        d = tmp_path / f"core-old{i}"
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "x.nbi").write_bytes(b"x")
        os.utime(d, (1000 + i, 1000 + i))
    (tmp_path / "unrelated").mkdir()
    current = tmp_path / "core-current"
    removed = core.prune_caches(str(current), keep=3)
    left = sorted(p.name for p in tmp_path.iterdir())
    # the current folder (now the most recent) and the two most recently used old ones stay
    assert left == ["core-current", "core-old3", "core-old4", "unrelated"]
    assert sorted(os.path.basename(r) for r in removed) == ["core-old0", "core-old1", "core-old2"]
    assert core.prune_caches(str(current), keep=3) == []


@pytest.mark.slow
def test_an_edit_of_one_core_file_recompiles_its_callers(tmp_path):
    """The stale-cache trap: edit the evaluation's file only; the search (cached in
    another file, with the old evaluation compiled in) must not be loaded from the old cache."""
    import shutil

    pkg = tmp_path / "pkg"
    shutil.copytree(Path(__file__).resolve().parent.parent / "evotune", pkg / "evotune",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(pkg), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    script = ("import evotune.engine as e; print(e.search(" + repr(KIWIPETE) + ", "
              "[100, 300, 330, 500, 900, 10], depth=3).nodes)")

    def nodes() -> int:
        p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=900, cwd=tmp_path)
        assert p.returncode == 0, p.stderr[-2000:]
        return int(p.stdout.split()[-1])

    before = nodes()
    shannon = pkg / "evotune" / "engine" / "core" / "eval_shannon.py"
    text = shannon.read_text()
    line = "    mob += popcount(KING[lsb(U[o + 5])] & notown)\n"
    assert line in text
    shannon.write_text(text.replace(line, ""))  # king moves no longer count as mobility
    after = nodes()
    assert after != before
    assert len(list((tmp_path / "cache").glob("core-*"))) == 2
