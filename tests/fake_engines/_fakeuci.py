"""A tiny scripted UCI engine for tests: plays a seeded random legal move, and can misbehave.

Modes: 'random' (well-behaved), 'crash' (exits on the Nth ``go``), 'hang' (never answers the Nth
``go``: sleeps), 'slow' (answers the Nth ``go`` after 1 s), 'illegal' (answers the Nth ``go`` with
an illegal move). Any mode takes ``--delay S`` (sleep S seconds before answering every ``go``)
and ``--position-delay S`` (sleep S seconds after every ``position``): an engine of known
thinking time for the clock tests. With ``once`` (a file
path) the fault happens only in the first process that reaches its Nth ``go`` without finding
the file (it creates it then), so a restarted engine, or a process that was only started to
check its options, behaves. With ``--pids DIR`` each process writes a file named by its pid into
DIR when it starts (tests count and find the engine processes a command started).
"""
from __future__ import annotations

import os
import random
import sys
import time

import chess

OPTIONS = (
    ("Seed", 0, 0, 1_000_000),
    ("KnightValue", 300, 0, 2000),
    ("MobilityWeight", 10, 0, 2000),
)
SPACED_OPTIONS = (
    ("Seed", 0, 0, 1_000_000),
    ("Knight Value (Middle Game)", 300, 0, 2000),
    ("Mobility (Middle Game)", 10, 0, 2000),
    ("Futility Pruning (Main Search)", 1, 0, 1),
)
"""Options named as some real engines name them (spaces, parentheses); the score echoes the
first weight's value, as KnightValue's does."""
SPACED_STRINGS = (("Book File", "book.bin"),)
"""String options of the spaced engine (name, default)."""
EVERY_OPTIONS = (
    ("Seed", 0, 0, 1_000_000),
    ("Knight Value (Middle Game)", 300, 0, 2000),
    ("PSQT[0] Mg.a1+", -5, -50, 50),
    ("Hash", 16, 1, 33554432),
    ("Threads", 1, 1, 1024),
    ("MultiPV", 1, 1, 500),
    ("Move Overhead", 10, 0, 5000),
    ("Contempt", 24, -100, 100),
    ("Search Depth", 0, 0, 64),
    ("Flat", 7, 7, 7),
    ("Aspiration Window", 16, 1, 200),
)
"""Spin options of the engine that declares every option type (every_option.py): tunables (the
seed, spaced and odd names, the window) among options that are not (resources, limits, a
handicap, one with nothing to tune)."""
EVERY_DECLARED = (
    "option name Ponder type check default false",
    "option name OwnBook type check default true",
    "option name Use Null Move type check default true",
    "option name Style type combo default Normal var Solid var Normal var Risky",
    "option name SyzygyPath type string default <empty>",
    "option name Engine Tag type string default hello world",
    "option name Clear Hash type button",
    "option name UCI_Chess960 type check default false",
    "option name UCI_Elo type spin default 1350 min 1350 max 2850",
)
"""The other options of that engine, as its ``uci`` answer declares them."""


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _position(tokens: list[str]) -> chess.Board:
    if tokens and tokens[0] == "startpos":
        board, rest = chess.Board(), tokens[1:]
    else:
        i = tokens.index("moves") if "moves" in tokens else len(tokens)
        board, rest = chess.Board(" ".join(tokens[1:i])), tokens[i:]
    if rest and rest[0] == "moves":
        for uci in rest[1:]:
            board.push_uci(uci)
    return board


def _fault_now(once: str | None) -> bool:
    """With ``once``: True only for the first process that gets here (it creates the file)."""
    if once is None:
        return True
    try:
        with open(once, "x") as fh:
            fh.write("faulted\n")
        return True
    except FileExistsError:
        return False


def run(mode: str = "random", *, after: int = 3, once: str | None = None,
        options=OPTIONS, strings=(), delay: float = 0.0, position_delay: float = 0.0,
        declared=()) -> None:
    values = {name: default for name, default, _, _ in options}
    texts = dict(strings)
    for text in declared:  # other option types: taken as text
        texts[text.split(" type ")[0].removeprefix("option name ")] = ""
    echoed = options[1][0]
    board = chess.Board()
    gos = 0
    for line in sys.stdin:
        tokens = line.split()
        if not tokens:
            continue
        cmd = tokens[0]
        if cmd == "uci":
            _say(f"id name fake-{mode}")
            _say("id author evotune tests")
            for name, default, lo, hi in options:
                _say(f"option name {name} type spin default {default} min {lo} max {hi}")
            for name, default in strings:
                _say(f"option name {name} type string default {default}")
            for text in declared:
                _say(text)
            _say("uciok")
        elif cmd == "isready":
            _say("readyok")
        elif cmd == "setoption" and "value" in tokens:
            name = " ".join(tokens[2:tokens.index("value")])
            if name in texts:
                texts[name] = " ".join(tokens[tokens.index("value") + 1:])
                continue
            if name not in values:
                _say(f"info string unknown option {name}")
                continue
            values[name] = int(tokens[tokens.index("value") + 1])
        elif cmd == "position":
            board = _position(tokens[1:])
            time.sleep(position_delay)
        elif cmd == "go":
            gos += 1
            time.sleep(delay)
            if gos == after and mode != "random" and not _fault_now(once):
                mode = "random"
            if gos == after and mode == "crash":
                sys.exit(3)
            if gos == after and mode == "hang":
                time.sleep(3600)
            if gos == after and mode == "slow":
                time.sleep(1.0)  # answers, but late for a short clock
            moves = sorted(m.uci() for m in board.legal_moves)
            if gos == after and mode == "illegal":
                _say("bestmove a1a8" if "a1a8" not in moves else "bestmove h8h1")
                continue
            if not moves:
                _say("bestmove (none)")
                continue
            rng = random.Random(f"{values['Seed']}:{board.fen()}")
            # the score echoes KnightValue so tests can see that options arrived
            move = rng.choice(moves)
            _say(f"info depth 1 score cp {values[echoed]} nodes {len(moves)} pv {move}")
            _say(f"bestmove {move}")
        elif cmd == "quit":
            break


def main(mode: str, options=OPTIONS, strings=(), declared=()) -> None:
    """Entry point of the mode scripts: parse --after/--once and run."""
    args = sys.argv[1:]
    after = int(args[args.index("--after") + 1]) if "--after" in args else 3
    once = args[args.index("--once") + 1] if "--once" in args else None
    if "--pids" in args:
        with open(os.path.join(args[args.index("--pids") + 1], str(os.getpid())), "w"):
            pass
    delays = {flag: float(args[args.index(flag) + 1]) if flag in args else 0.0
              for flag in ("--delay", "--position-delay")}
    run(mode, after=after, once=once, options=options, strings=strings, delay=delays["--delay"],
        position_delay=delays["--position-delay"], declared=declared)
