"""A net as a player everywhere: ``nnue:FILE`` and ``features = "nnue"`` specs in match, the
move-by-move loop against a UCI engine, ``evotune uci``, datagen's text format, search, bench
and the ``evotune nn`` commands. Random nets know nothing (their quiescence finds few cut-offs),
so their games run with node limits."""
from __future__ import annotations

import io
import json
import os
import sys
import threading
import time

import chess
import chess.engine
import pytest

from evotune.cli import main
from evotune.engine import api
from evotune.engine.net.network import Net, evaluate_reference, random_net, read_net, write_net
from evotune.engine.uci.frontend import UciEngine
from evotune.errors import ConfigError, NetError
from evotune.learn.datagen import DatagenSettings, datagen
from evotune.learn.labels import read_positions
from evotune.limits import Limits
from evotune.match.fixtures import GameTask, MatchSettings
from evotune.match.openings import Opening
from evotune.match.resolve import resolve_player, resolve_player_list
from evotune.match.runner import map_games
from evotune.players.gameloop import play_players_game
from evotune.players.spec import player_from_engine_spec
from evotune.spec.file import load_engine_spec

TERMINATIONS = {"checkmate", "stalemate", "repetition", "fifty-move", "insufficient-material",
                "ply-cap"}


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nets")
    a, b = folder / "a.nnue", folder / "b.bin"
    write_net(random_net(32, 1), a)
    write_net(random_net(16, 2, "crelu"), b, "bullet")
    return a, b


def run(capsys, *args):
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def replay(opening_board: chess.Board, moves) -> chess.Board:
    board = opening_board.copy()
    for uci in moves:
        move = chess.Move.from_uci(uci)
        assert move in board.legal_moves, (board.fen(), uci)
        board.push(move)
    return board


# ---- players --------------------------------------------------------------------------------------

def test_nnue_file_is_a_player(nets):
    a, b = nets
    p = resolve_player(f"nnue:{a}")
    assert (p.kind, p.features, p.name, p.weights) == ("builtin", "nnue", "nnue:a", ())
    assert p.net == str(a.resolve()) and p.net_checksum == read_net(a).checksum
    q = resolve_player(f"nnue:{b}")   # bullet's raw layout, recognised by its size
    assert q.net_checksum == read_net(b).checksum and read_net(b).activation == "screlu"
    opponents = resolve_player_list(f"shannon,nnue:{a},nnue:{a}")   # gauntlets, verify
    assert [o.name for o in opponents] == ["shannon", "nnue:a-A", "nnue:a-B"]
    assert opponents[1].net == p.net
    with pytest.raises(ConfigError, match="names no net; give the player as nnue:FILE"):
        resolve_player("nnue")
    with pytest.raises(NetError, match="no such file"):
        resolve_player("nnue:missing.nnue")


def test_a_net_in_bullets_layout_plays_as_the_same_net(tmp_path):
    net = random_net(48, 6)
    write_net(net, tmp_path / "q.bin", "bullet")
    back = read_net(tmp_path / "q.bin")
    line = ["e2e4", "d7d5", "e4d5", "g8f6", "f1b5", "c7c6", "d5c6", "b8c6", "g1f3", "e7e5",
            "e1g1"]
    assert back == net
    assert (api.evaluate_line(chess.Board(), line, back, "nnue")
            == api.evaluate_line(chess.Board(), line, net, "nnue")).all()
    p = resolve_player(f"nnue:{tmp_path / 'q.bin'}")
    assert p.net_checksum == net.checksum


def test_a_spec_names_its_net(tmp_path, nets):
    a, _ = nets
    (tmp_path / "net.nnue").write_bytes(a.read_bytes())
    spec_file = tmp_path / "mynet.toml"
    spec_file.write_text('name = "mynet"\nkind = "builtin"\nfeatures = "nnue"\nnet = "net.nnue"\n')
    spec = load_engine_spec(spec_file)
    assert spec.net == str((tmp_path / "net.nnue").resolve()) and spec.space().size == 0
    p = resolve_player(str(spec_file))
    assert p.features == "nnue" and p.net_checksum == read_net(a).checksum
    # the net is part of the spec's identity
    other = tmp_path / "other"
    other.mkdir()
    write_net(random_net(32, 9), other / "net.nnue")
    (other / "mynet.toml").write_bytes(spec_file.read_bytes())
    assert load_engine_spec(other / "mynet.toml").digest != spec.digest
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "builtin"\nfeatures = "pst"\nnet = "net.nnue"\n')
    with pytest.raises(ConfigError, match='net is for a builtin engine with features = "nnue"'):
        load_engine_spec(bad)
    bad.write_text('kind = "builtin"\nfeatures = "nnue"\nnet = "nowhere.nnue"\n')
    with pytest.raises(ConfigError, match="net 'nowhere.nnue' not found"):
        load_engine_spec(bad)
    with pytest.raises(ConfigError, match="no free weight"):
        spec.space().require_free()          # read to play: no weights (a run reads its net's
                                             # output layer as weights: test_nn_tune.py)
    with pytest.raises(ConfigError, match="has no network"):
        player_from_engine_spec(load_engine_spec("shannon"), net=str(a))


def test_a_changed_net_file_is_refused_where_games_are_played(tmp_path, nets):
    from evotune.players.nets import evaluation

    path = tmp_path / "n.nnue"
    write_net(random_net(8, 1), path)
    p = resolve_player(f"nnue:{path}")
    write_net(random_net(8, 2), path)
    with pytest.raises(NetError, match="changed since the player was made"):
        evaluation(p)


def test_match_games_of_nets_are_legal_and_complete(nets):
    a, b = nets
    na, nb, shannon = (resolve_player(f"nnue:{a}"), resolve_player(f"nnue:{b}"),
                       resolve_player("shannon"))
    settings = MatchSettings(limits=Limits(depth=3, nodes=3000, max_plies=400))
    tasks = [GameTask(key=(0, 0, i, i), white=w, black=bl, opening=Opening(), settings=settings)
             for i, (w, bl) in enumerate([(na, nb), (nb, na), (na, shannon), (shannon, nb)])]
    for rec in map_games(tasks):
        assert rec.termination in TERMINATIONS
        board = replay(chess.Board(), rec.moves)
        if rec.termination == "checkmate":
            assert board.is_checkmate()
        elif rec.termination != "ply-cap":
            assert board.is_game_over(claim_draw=True)
        assert rec.white_weights == () or rec.white_name == "shannon"


def test_a_net_plays_an_external_engine_move_by_move(nets, fake_engine):
    from evotune.players import PlayerSpec

    a, _ = nets
    ext = PlayerSpec(name="fake", kind="uci", command=tuple(fake_engine("random_mover")))
    out = play_players_game(resolve_player(f"nnue:{a}"), ext, chess.Board(),
                            Limits(depth=2, nodes=2000, max_plies=300))
    assert out.termination in TERMINATIONS and len(out.moves) > 10
    replay(chess.Board(), out.moves)
    assert out.leaf_phi.shape == (len(out.moves), 0)


def test_search_and_bench_commands_take_a_net(nets, capsys):
    a, _ = nets
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    code, out, err = run(capsys, "search", fen, "--engine", f"nnue:{a}", "--depth", "3",
                         "--nodes", "20000")
    assert code == 0, err
    net = read_net(a)
    want = api.search(fen, net, depth=3, nodes=20000, features="nnue")
    assert out.startswith(f"bestmove {want.move} score {want.score} ")
    code, out, err = run(capsys, "search", fen, "--engine", "nnue", "--depth", "1")
    assert code == 2 and "names no net" in err
    code, out, err = run(capsys, "search", fen, "--engine", f"nnue:{a}", "--weights", "x.json")
    assert code == 2 and "an nnue engine has no weights" in err
    code, out, err = run(capsys, "bench", "--quick", "--json", "--engine", f"nnue:{a}")
    assert code == 0, err
    d = json.loads(out)
    assert d["features"] == "nnue" and d["signature"] > 0 and d["search_nps"] > 0
    assert d["reference_search_nps"] > 0


# ---- uci ----------------------------------------------------------------------------------------

def test_uci_engine_with_a_net(nets):
    a, b = nets
    out = io.StringIO()
    eng = UciEngine(spec=load_engine_spec("nnue"), net=a, out=out)
    for line in ("uci", "isready", "position startpos moves e2e4 e7e5", "go depth 2 nodes 3000"):
        eng.handle(line)
    eng.wait()
    lines = out.getvalue().splitlines()
    assert f"option name EvalFile type string default {a}" in lines and "uciok" in lines
    best = lines[-1].split()[1]
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    assert chess.Move.from_uci(best) in board.legal_moves
    want = api.search(board, read_net(a), depth=2, nodes=3000, features="nnue")
    assert want.move == best
    eng.handle(f"setoption name EvalFile value {b}")
    assert isinstance(eng.net, Net) and eng.net.checksum == read_net(b).checksum
    eng.handle("setoption name EvalFile value /nonexistent.nnue")
    assert "no such file" in out.getvalue().splitlines()[-1]
    assert eng.net.checksum == read_net(b).checksum     # the net in use stays
    fifo = a.parent / "fifo.nnue"  # issue 38 item 12: a FIFO blocked the engine for good
    if not fifo.exists():
        os.mkfifo(fifo)
    told = threading.Thread(target=eng.handle, args=(f"setoption name EvalFile value {fifo}",),
                            daemon=True)
    told.start()
    told.join(20)
    assert not told.is_alive(), "setoption EvalFile of a FIFO blocked the engine"
    assert "is not a regular file" in out.getvalue().splitlines()[-1]
    assert eng.net.checksum == read_net(b).checksum
    with pytest.raises(ConfigError, match="names no net"):
        UciEngine(spec=load_engine_spec("nnue"), out=out, warm=False)


def test_stop_ends_a_nets_first_iteration(nets):
    """A random net's first iteration can take minutes: for a net the stop flag acts at once."""
    a, _ = nets
    out = io.StringIO()
    eng = UciEngine(spec=load_engine_spec("nnue"), net=a, out=out)
    eng.handle("isready")
    # a middlegame with many captures: the random net's quiescence explodes at depth 1
    eng.handle("position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    t0 = time.perf_counter()
    eng.handle("go movetime 200")
    eng.wait(timeout=30)
    assert time.perf_counter() - t0 < 10
    best = out.getvalue().splitlines()[-1].split()
    assert best[0] == "bestmove" and chess.Move.from_uci(best[1]) in chess.Board(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1").legal_moves


def test_a_net_plays_complete_games_through_evotune_uci(nets):
    a, _ = nets
    cmd = [sys.executable, "-m", "evotune.cli", "uci", "--engine", f"nnue:{a}"]
    with chess.engine.SimpleEngine.popen_uci(cmd, timeout=120) as engine:
        for start in (chess.STARTING_FEN,
                      "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"):
            board = chess.Board(start)
            while not board.is_game_over(claim_draw=True) and board.ply() < 600:
                result = engine.play(board, chess.engine.Limit(nodes=1500))
                assert result.move in board.legal_moves
                board.push(result.move)
            assert board.is_game_over(claim_draw=True), board.fen()


# ---- datagen ------------------------------------------------------------------------------------

def test_datagen_text_format_with_a_net(tmp_path, nets):
    a, _ = nets
    out = tmp_path / "net.txt"
    s = DatagenSettings(games=2, engine=f"nnue:{a}", limits=Limits(depth=2, nodes=3000),
                        fmt="text", per_game=4, seed=5)
    summary = datagen(s, out)
    lines = out.read_text().splitlines()
    assert summary.positions == len(lines) > 0
    for line in lines:
        fen, score, result = (x.strip() for x in line.split("|"))
        chess.Board(fen)
        assert result in ("1.0", "0.5", "0.0") and abs(int(score)) <= 32000
    assert len(read_positions([out])) == len(lines)


def test_datagen_text_scores_are_the_search_scores_from_whites_view(tmp_path):
    out = tmp_path / "s.txt"
    s = DatagenSettings(games=3, engine="shannon", limits=Limits(depth=2), fmt="text",
                        per_game=6, seed=2)
    datagen(s, out)
    checked = signs = 0
    for line in out.read_text().splitlines():
        fen, score, result = (x.strip() for x in line.split("|"))
        board = chess.Board(fen)
        if board.halfmove_clock:   # the history could matter (repetitions): skip
            continue
        mover = api.search(board, [100, 300, 330, 500, 900, 10], depth=2).score
        assert int(score) == (mover if board.turn == chess.WHITE else -mover), line
        checked += 1
        signs += board.turn == chess.BLACK and mover != 0
    assert checked >= 5 and signs >= 1
    # the label reader takes the result after the score, not the score
    assert {r for r in read_positions([out]).results} <= {0.0, 0.5, 1.0}


# ---- evotune nn ---------------------------------------------------------------------------------

def test_nn_init_info_export(tmp_path, capsys):
    net_file = tmp_path / "n.nnue"
    code, out, err = run(capsys, "nn", "init", "--hidden", "24", "--seed", "4", "--activation",
                         "crelu", "--out", net_file)
    assert code == 0, err
    net = read_net(net_file)
    assert net == random_net(24, 4, "crelu") and net.checksum in out
    code, out, err = run(capsys, "nn", "info", net_file)
    assert code == 0 and "(768 -> 24) x 2 -> 1" in out and "crelu" in out
    assert f"startpos    {evaluate_reference(net, chess.Board())} " in out
    assert f"checksum    {net.checksum}" in out and "evotune format" in out
    bullet = tmp_path / "n.bin"
    code, out, err = run(capsys, "nn", "export", net_file, "--format", "bullet", "--out", bullet)
    assert code == 0 and bullet.stat().st_size % 64 == 0
    # issue 38 item 10: what bullet's layout cannot keep is said, in one line
    assert err.count("\n") == 1 and "its reader must be told --activation crelu (" in err
    odd = tmp_path / "odd.nnue"
    write_net(Net(hidden=24, activation="screlu", l0w=net.l0w, l0b=net.l0b, l1w=net.l1w,
                  l1b=net.l1b, qa=32767, qb=1, scale=100000), odd)
    code, out, err = run(capsys, "nn", "export", odd, "--format", "bullet", "--out",
                         tmp_path / "odd.bin")
    assert code == 0 and err.count("\n") == 1, err
    assert "must be told qa 32767, qb 1, scale 100000 (it assumes screlu, qa 255, qb 64" in err
    code, out, err = run(capsys, "nn", "export", odd, "--format", "evotune", "--out",
                         tmp_path / "odd2.nnue")
    assert code == 0 and err == ""
    # bullet's file keeps no activation: give it back when reading
    back = tmp_path / "back.nnue"
    code, out, err = run(capsys, "nn", "export", bullet, "--format", "evotune", "--activation",
                         "crelu", "--out", back)
    assert code == 0 and back.read_bytes() == net_file.read_bytes()
    code, out, err = run(capsys, "nn", "info", bullet, "--hidden", "24")
    assert code == 0 and "bullet format" in out


@pytest.mark.parametrize("args, message", [
    (["nn", "init", "--hidden", "4", "--out", "{tmp}/x.nnue"], "net hidden 4 is invalid"),
    (["nn", "init", "--out", "{tmp}"], "is a directory"),
    (["nn", "info", "{tmp}/none.nnue"], "no such file"),
    (["nn", "export", "{tmp}/short.nnue", "--format", "bullet", "--out", "{tmp}/x.bin"],
     "truncated"),
    (["nn", "export", "{tmp}/ok.nnue", "--format", "bullet", "--hidden", "64", "--out",
      "{tmp}/x.bin"], "hidden size 8, not the 64"),
    # issue 38 items 12 and 16: a FIFO blocked for good, a device never ended, --out IN
    # overwrote the input
    (["nn", "info", "{tmp}/fifo.nnue"], "is not a regular file"),
    (["nn", "info", "/dev/zero"], "is not a regular file"),
    (["nn", "info", "{tmp}/big.nnue"], "more than the 25200784 bytes any net file has"),
    (["nn", "export", "{tmp}/fifo.nnue", "--format", "bullet", "--out", "{tmp}/x.bin"],
     "is not a regular file"),
    (["search", "--engine", "nnue:{tmp}/fifo.nnue", "--depth", "1",
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"], "is not a regular file"),
    (["nn", "export", "{tmp}/ok.nnue", "--format", "evotune", "--out", "{tmp}/ok.nnue"],
     "is the net file being exported"),
    (["nn", "export", "{tmp}/ok.nnue", "--format", "bullet", "--out", "{tmp}/../{tmpname}/ok.nnue"],
     "is the net file being exported"),
    # item 16: a missing folder was made without a word, a newline accepted in a name
    (["nn", "init", "--hidden", "8", "--out", "{tmp}/miss/x.nnue"], "the folder"),
    (["nn", "export", "{tmp}/ok.nnue", "--format", "bullet", "--out", "{tmp}/miss/x.bin"],
     "does not exist; make it first"),
    (["nn", "init", "--hidden", "8", "--out", "{tmp}/a\nb.nnue"], "has a control character"),
])
def test_nn_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, args, message):
    write_net(random_net(8, 1), tmp_path / "ok.nnue")
    os.mkfifo(tmp_path / "fifo.nnue")
    with open(tmp_path / "big.nnue", "wb") as f:      # sparse: one byte more than any net
        f.truncate(25_200_785)
    (tmp_path / "short.nnue").write_bytes((tmp_path / "ok.nnue").read_bytes()[:500])
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, *[a.format(tmp=tmp_path, tmpname=tmp_path.name) for a in args])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before and out == ""
