"""The net shipped with the network study (docs/results/nn-study-net9.nnue) is the one its page
describes: it reads as an evotune net of the stated shape, its checksum is the one the page's
"Remaking the best net" section names, and it plays a legal move from the start position."""
from __future__ import annotations

import re
from pathlib import Path

import chess

from evotune.engine import search
from evotune.engine.netfile import read_net

ROOT = Path(__file__).resolve().parents[1]
NET = ROOT / "docs" / "results" / "nn-study-net9.nnue"
PAGE = ROOT / "docs" / "results" / "nn-study.md"


def test_the_shipped_net_is_the_one_the_page_names():
    named = re.search(r"nn-study-net9\.nnue`[^`]*checksum `([0-9a-f]{16})`", PAGE.read_text())
    assert named, "the study page names the shipped net's checksum"
    net = read_net(NET)
    assert net.checksum == named.group(1)
    assert net.hidden == 128
    r = search(chess.STARTING_FEN, net, depth=2, features="nnue")
    assert chess.Move.from_uci(r.move) in chess.Board().legal_moves
