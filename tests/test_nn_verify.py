"""``evotune verify`` on a net training: the trained net (net.nnue, played from its copy
verify.nnue) against shannon's reference weights and against the training's initial net
(initial.nnue), stored as verify.json and shown in the training's report; a training without a
finished epoch and bad flags are one line, exit 2, nothing written."""
from __future__ import annotations

import json
import shutil

import chess
import pytest
from click.testing import CliRunner

from evotune.cli import cli, main
from evotune.engine.net.network import random_net, read_net, write_net
from evotune.kinds.training import TrainConfig, execute_training, new_training
from evotune.learn.nn.trainer import TrainSettings
from evotune.limits import LimitChanges, Limits
from evotune.match import MatchSettings, play_match
from evotune.match.scoring import SprtParams
from evotune.paths import HELD_OUT_OPENINGS
from evotune.players.nets import net_player
from evotune.verify.run import VerifySettings, verify_run
from evotune.verify.text import describe_match, verdict_text

VALUES = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 320, chess.ROOK: 500,
          chess.QUEEN: 900, chess.KING: 0}
SMALL = dict(hidden=16, batch=64, lr=0.003, seed=5)


@pytest.fixture(scope="module")
def trained(random_positions, tmp_path_factory):
    """A 2-epoch training 't' on 400 positions of random games scored by material, and a
    training 'fresh' that has not finished an epoch."""
    folder = tmp_path_factory.mktemp("nnverify")
    lines = []
    for b in random_positions(400, 31):
        s = sum(VALUES[p.piece_type] * (1 if p.color else -1) for p in b.piece_map().values())
        lines.append(f"{b.fen()} | {s} | {1.0 if s > 150 else 0.0 if s < -150 else 0.5}\n")
    data = folder / "d.txt"
    data.write_text("".join(lines))
    runs = folder / "runs"
    cfg = TrainConfig(data=(str(data),), settings=TrainSettings(epochs=2, **SMALL))
    store, packed = new_training(cfg, out_dir=runs, run_id="t")
    summary = execute_training(store, cfg, data=packed)
    new_training(cfg, out_dir=runs, run_id="fresh")
    return runs, store, summary


def test_verify_plays_the_net_against_the_reference_and_the_initial_net(trained, tmp_path):
    runs, store, summary = trained
    root = store.root
    res = CliRunner().invoke(cli, ["verify", "t", "--games", "4", "--depth", "1", "--workers",
                                   "1", "--runs-dir", str(runs)])
    assert res.exit_code == 0, res.output
    doc = json.loads((root / "verify.json").read_text())
    initial = read_net(root / "initial.nnue").checksum
    assert summary.checksum == read_net(root / "net.nnue").checksum != initial
    assert (root / "verify.nnue").read_bytes() == (root / "net.nnue").read_bytes()
    assert (doc["kind"], doc["generation"], doc["depth"], doc["seed"], doc["engine"]) == \
        ("train", 2, 1, 5, "nnue")
    assert doc["openings"] == HELD_OUT_OPENINGS.name and doc["net"]["checksum"] == summary.checksum
    assert doc["initial"] == {"file": "initial.nnue", "init": "random from seed 5",
                              "checksum": initial}
    ref, init = doc["matches"]
    assert (ref["label"], ref["opponent"]) == ("net vs shannon", "shannon")
    assert ref["b"] == [100, 300, 330, 500, 900, 10] and "b_net" not in ref
    assert (init["label"], init["opponent"]) == ("net vs initial net", "initial net")
    assert init["b_net"] == {"file": "initial.nnue", "checksum": initial}
    for m in (ref, init):
        assert m["a_net"] == {"file": "verify.nnue", "checksum": summary.checksum}
        assert m["games"] == 4 and m["wins"] + m["draws"] + m["losses"] == 4
        assert sum(m["pentanomial"]) == 2 and 2 * m["wins"] + m["draws"] == m["points_a"]
        assert describe_match(m) in res.output
    # the output names the verified net and the initial net by their checksums
    assert f"checksum {summary.checksum}" in res.output
    assert f"opponent initial net: initial.nnue, checksum {initial}" in res.output
    # the initial-net match is a match against initial.nnue itself: the same games
    direct = play_match(net_player(root / "net.nnue"), net_player(root / "initial.nnue"),
                        games=4, seed=5, workers=1,
                        settings=MatchSettings(limits=Limits(depth=1),
                                               openings=str(HELD_OUT_OPENINGS)))
    assert (direct.wins, direct.draws, direct.losses, list(direct.pentanomial)) == \
        (init["wins"], init["draws"], init["losses"], init["pentanomial"])
    # the training's report shows the verification
    res = CliRunner().invoke(cli, ["report", "t", "--runs-dir", str(runs), "--reports",
                                   str(tmp_path)])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "t" / "report.md").read_text()
    assert "## Verification" in md and describe_match(ref) in md and describe_match(init) in md


def test_same_seed_same_result_for_any_worker_count_and_named_opponents(trained):
    """Determinism: the default verification again with 2 workers, and with the same two
    opponents named by --opponent, plays the same games; another seed other openings."""
    runs, store, _ = trained
    settings = dict(games=4, limits=LimitChanges(depth=1), seed=11)
    one = verify_run("t", runs_dir=runs, settings=VerifySettings(workers=1, **settings))
    two = verify_run("t", runs_dir=runs, settings=VerifySettings(workers=2, **settings))
    assert one["matches"] == two["matches"]
    named = verify_run("t", runs_dir=runs, settings=VerifySettings(
        workers=1, opponents=("shannon", f"nnue:{store.root / 'initial.nnue'}"), **settings))
    assert [m["label"] for m in named["matches"]] == ["net vs shannon", "net vs nnue:initial"]
    for a, b in zip(one["matches"], named["matches"]):
        assert (a["wins"], a["draws"], a["losses"], a["pentanomial"], a["b_net"] if "b_net" in a
                else a["b"]) == (b["wins"], b["draws"], b["losses"], b["pentanomial"],
                                 b["b_net"] if "b_net" in b else b["b"])
    assert named["initial"]["checksum"] == one["initial"]["checksum"]


@pytest.mark.slow  # over 10 s on 2 loaded cores: run by the full suite (python -m pytest)
def test_verify_on_a_training_at_a_second_depth_plays_both_legs(trained, tmp_path):
    """--also-depth 2 on a training: both matches at depth 1, then both again at depth 2 (the
    same openings and seed); the depth-1 leg is the games of a depth-1 verification alone, the
    depth-2 leg against the initial net those of net.nnue against initial.nnue at depth 2; the
    output and the report name both limits and give each opponent's verdict at both."""
    runs, store, summary = trained
    root = store.root
    sprt = (-400, 400)
    one = verify_run("t", runs_dir=runs,
                     settings=VerifySettings(games=4, limits=LimitChanges(depth=1), workers=1,
                                             sprt=sprt))
    res = CliRunner().invoke(cli, ["verify", "t", "--games", "4", "--depth", "1",
                                   "--also-depth", "2", "--sprt", "-400", "400", "--workers",
                                   "1", "--runs-dir", str(runs)])
    assert res.exit_code == 0, res.output
    doc = json.loads((root / "verify.json").read_text())
    assert doc["kind"] == "train" and doc["depth"] == 1
    assert doc["limits"] == ["depth 1", "depth 2"]
    assert doc["also"] == {"depth": 2, "nodes": 0, "movetime": 0.0, "tc": ""}
    assert [(m["label"], m["limit"]) for m in doc["matches"]] == [
        ("net vs shannon at depth 1", "depth 1"), ("net vs initial net at depth 1", "depth 1"),
        ("net vs shannon at depth 2", "depth 2"), ("net vs initial net at depth 2", "depth 2")]
    initial = read_net(root / "initial.nnue").checksum
    for m in doc["matches"]:
        assert m["a_net"] == {"file": "verify.nnue", "checksum": summary.checksum}
        assert m["wins"] + m["draws"] + m["losses"] == m["games"] <= 4
        assert m["sprt"]["elo0"] == -400 and describe_match(m) in res.output
    assert doc["matches"][3]["b_net"] == {"file": "initial.nnue", "checksum": initial}
    drop = ("label", "limit")
    for m, m1 in zip(doc["matches"][:2], one["matches"]):
        assert {k: v for k, v in m.items() if k not in drop} == \
            {k: v for k, v in m1.items() if k not in drop}  # the same games at depth 1
    direct = play_match(net_player(root / "net.nnue"), net_player(root / "initial.nnue"),
                        games=4, seed=5, workers=1, stop="sprt", sprt=SprtParams(*sprt),
                        settings=MatchSettings(limits=Limits(depth=2),
                                               openings=str(HELD_OUT_OPENINGS)))
    at2 = doc["matches"][3]
    assert (direct.wins, direct.draws, direct.losses, list(direct.pentanomial)) == \
        (at2["wins"], at2["draws"], at2["losses"], at2["pentanomial"])
    assert f"held-out openings {HELD_OUT_OPENINGS.name}, depth 1 and depth 2, seed 5" \
        in res.output
    assert f"opponent initial net: initial.nnue, checksum {initial}" in res.output
    for label in ("shannon", "initial net"):
        legs = [m for m in doc["matches"] if m["opponent"] == label]
        assert (f"SPRT [-400, 400] against {label}: depth 1: {verdict_text(legs[0])}; "
                f"depth 2: {verdict_text(legs[1])}") in res.output
    res = CliRunner().invoke(cli, ["report", "t", "--runs-dir", str(runs), "--reports",
                                   str(tmp_path)])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "t" / "report.md").read_text()
    assert "depth 1 and depth 2" in md and describe_match(at2) in md


def _refused(args, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(args)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1, err
    return err


def test_a_training_without_a_finished_epoch_is_one_line_exit_2(trained, capsys):
    runs, _, _ = trained
    root = runs / "fresh"
    assert (root / "net.nnue").is_file()  # epoch 0's net is the initial net: nothing to verify
    err = _refused(["verify", "fresh", "--games", "2", "--runs-dir", str(runs)], capsys)
    assert "training 'fresh' has not finished an epoch yet" in err
    (root / "net.nnue").unlink()
    err = _refused(["verify", "fresh", "--games", "2", "--runs-dir", str(runs)], capsys)
    assert "has not finished an epoch yet" in err
    assert not (root / "verify.json").exists() and not (root / "verify.nnue").exists()


def test_a_replaced_initial_net_is_refused_not_played_as_the_initial_one(trained, tmp_path,
                                                                         capsys):
    """Issue 38 item 16: verify of a training whose initial.nnue was replaced played the foreign
    net as 'random from seed 5'."""
    runs, store, _ = trained
    copy = tmp_path / "runs"
    shutil.copytree(store.root, copy / "t")
    for name in ("verify.json", "verify.nnue"):  # from the tests before
        (copy / "t" / name).unlink(missing_ok=True)
    write_net(random_net(store.manifest().config.settings.hidden, 77),
              copy / "t" / "initial.nnue")
    err = _refused(["verify", "t", "--games", "2", "--runs-dir", str(copy)], capsys)
    assert "initial.nnue (checksum" in err and "is not the initial net of training 't'" in err
    assert not (copy / "t" / "verify.json").exists()
    assert not (copy / "t" / "verify.nnue").exists()


@pytest.mark.parametrize("flags, says", [
    (["--engine", "shannon"], "a training's nets play with a builtin nnue spec"),
    (["--recommend", "better-half"], "a training has one net to verify"),
    (["--openings", "missing.epd"], "openings 'missing.epd': no such file"),
    (["--opponents", "nope:x"], "player 'nope:x'"),
    (["--games", "3"], "games must be a positive even number"),
    (["--also-depth", "3"], "the second limit (depth 3) is the first one"),
    (["--also-tc", "fast"], "--also-tc 'fast': give BASE+INC"),
    # issue 38 item 16: a net and shannon are alpha-beta searches: a clock changes no game
    (["--also-tc", "10"], "every player here is a built-in alpha-beta search"),
    (["--also-depth", "2", "--also-tc", "10"], "give one second limit"),
])
def test_bad_flags_on_a_training_are_one_line_and_write_nothing(trained, tmp_path, capsys,
                                                                 flags, says):
    runs, store, _ = trained
    before = {p.name: p.stat().st_mtime_ns for p in store.root.iterdir()}
    err = _refused(["verify", "t", "--runs-dir", str(runs), *flags], capsys)
    assert says in err
    assert {p.name: p.stat().st_mtime_ns for p in store.root.iterdir()} == before
