"""The nets shipped with the network study (docs/results/nn-study-*.nnue) are the ones its page
describes: each reads as an evotune net of the stated shape, its checksum is the one the page's
"Remaking the best net" section names for that file, and it plays a legal move from the start
position."""
from __future__ import annotations

import re
from pathlib import Path

import chess
import pytest

from evotune.engine import search
from evotune.engine.net.network import read_net

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
PAGE = RESULTS / "nn-study.md"


def test_the_page_ships_the_best_net_and_its_teacher():
    assert sorted(p.name for p in RESULTS.glob("nn-study-*.nnue")) == [
        "nn-study-net11.nnue", "nn-study-net9.nnue"]


@pytest.mark.parametrize("name", ["net9", "net11"])
def test_a_shipped_net_is_the_one_the_page_names(name):
    named = re.search(rf"nn-study-{name}\.nnue`[^`]*checksum `([0-9a-f]{{16}})`",
                      PAGE.read_text())
    assert named, f"the study page names nn-study-{name}.nnue's checksum"
    net = read_net(RESULTS / f"nn-study-{name}.nnue")
    assert net.checksum == named.group(1)
    assert net.hidden == 128
    r = search(chess.STARTING_FEN, net, depth=2, features="nnue")
    assert chess.Move.from_uci(r.move) in chess.Board().legal_moves


def test_net11_is_a_packaged_engine_spec_usable_by_name():
    """`net11` names the best net wherever an engine spec is named (match, run, uci, verify):
    the packaged spec plays the very file the study page ships."""
    from evotune.players.spec import player_from_engine_spec
    from evotune.spec.file import load_engine_spec

    spec = load_engine_spec("net11")
    assert spec.features == "nnue" and Path(spec.net).name == "net11.nnue"
    assert Path(spec.net).read_bytes() == (RESULTS / "nn-study-net11.nnue").read_bytes()
    player = player_from_engine_spec(spec, None, name="net11")
    assert player.name == "net11"


def test_the_scale_study_ships_its_best_net_as_the_spec_net12():
    """docs/results/nn-scale.md names nn-scale-net12.nnue's checksum; the file is that net, net11's
    shape, and the packaged spec `net12` plays the very same bytes."""
    from evotune.players.spec import player_from_engine_spec
    from evotune.spec.file import load_engine_spec

    page = (RESULTS / "nn-scale.md").read_text()
    named = re.search(r"nn-scale-net12\.nnue`\]\(nn-scale-net12\.nnue\) \(evotune's\s+format, "
                      r"197,418 bytes, checksum `([0-9a-f]{16})`", page)
    assert named, "the scale study's page names nn-scale-net12.nnue's checksum"
    net = read_net(RESULTS / "nn-scale-net12.nnue")
    assert net.checksum == named.group(1) and net.hidden == 128 and not net.bucketed
    assert net.checksum != read_net(RESULTS / "nn-study-net11.nnue").checksum
    spec = load_engine_spec("net12")
    assert Path(spec.net).read_bytes() == (RESULTS / "nn-scale-net12.nnue").read_bytes()
    assert player_from_engine_spec(spec, None, name="net12").name == "net12"
    r = search(chess.STARTING_FEN, net, depth=2, features="nnue")
    assert chess.Move.from_uci(r.move) in chess.Board().legal_moves


def test_the_scale_studys_second_loop_ships_its_net_as_the_spec_net13():
    """docs/results/nn-scale.md, "The loop again": nn-scale-net13.nnue is the checksum and
    SHA-256 the page names, net12 trained on (net11's shape, another net), and the packaged
    spec `net13` plays the very same bytes."""
    import hashlib

    from evotune.spec.file import load_engine_spec

    page = (RESULTS / "nn-scale.md").read_text()
    named = re.search(r"\[`nn-scale-net13\.nnue`\]\(nn-scale-net13\.nnue\) \(197,418 bytes, "
                      r"checksum\s+`([0-9a-f]{16})`, SHA-256\s+`([0-9a-f]{64})`", page)
    assert named, "the scale study's page names nn-scale-net13.nnue's checksum and SHA-256"
    data = (RESULTS / "nn-scale-net13.nnue").read_bytes()
    assert hashlib.sha256(data).hexdigest() == named.group(2)
    net = read_net(RESULTS / "nn-scale-net13.nnue")
    assert net.checksum == named.group(1) and net.hidden == 128 and not net.bucketed
    assert net.checksum != read_net(RESULTS / "nn-scale-net12.nnue").checksum
    spec = load_engine_spec("net13")
    assert Path(spec.net).read_bytes() == data


@pytest.mark.parametrize("start", ["net11", "net12"])
def test_blondie25s_row_ships_the_strategys_layers_on_their_start_nets(start):
    """docs/results/nn-scale.md, "Blondie25's row": each shipped net is its start net (the
    packaged spec's file) with another output layer, and the page names its SHA-256 and
    checksum."""
    import hashlib

    from evotune.spec.file import load_engine_spec

    name = f"nn-scale-blondie-{start}.nnue"
    data = (RESULTS / name).read_bytes()
    page = " ".join((RESULTS / "nn-scale.md").read_text().split())
    named = re.search(rf"\({re.escape(name)}\) \(SHA-256 `([0-9a-f]{{64}})`, checksum "
                      r"`([0-9a-f]{16})`\)", page)
    assert named, f"the page names {name}'s SHA-256 and checksum"
    assert hashlib.sha256(data).hexdigest() == named.group(1)
    net, base = read_net(RESULTS / name), read_net(load_engine_spec(start).net)
    assert net.checksum == named.group(2) and net.checksum != base.checksum
    assert (net.l0w == base.l0w).all() and (net.l0b == base.l0b).all()
    assert not (net.l1w == base.l1w).all()
