"""Players named on the command line: ``SPEC[:WEIGHTS]`` -> PlayerSpec.

Wherever evotune names a player (``evotune match A B``, ``verify --opponents``, gauntlet
opponents) it is written ``SPEC[:WEIGHTS]``:

- ``SPEC`` is an engine spec: a name under ``engines/`` (``shannon``, ``pst``, ...) or a
  ``.toml`` path. ``reference`` is an alias of ``shannon``. A builtin spec plays the built-in
  engine with the spec's feature set; a 'uci' spec starts the external engine with its options.
- ``WEIGHTS`` is a file with the spec's weights; without it the player plays the spec's
  reference values. A ``.json`` file may be a list with one number per weight (evotune units)
  or any ``evotune export --format json`` output: a flat object ``{name: value}`` or the nested
  one-object-per-table form, with evotune names or the spec's option names, values in engine
  units (``value / scale``). A ``.csv``, ``.h``/``.hpp`` (header) or ``.py`` file is read as
  that export format. Fixed weights may be left out (they take their reference value).
- For an ``nnue`` spec (``features = "nnue"``) ``WEIGHTS`` is a network file instead:
  ``nnue:FILE`` plays the built-in engine with that net (evotune's file or bullet's).
- For compatibility a bare weights file (``tuned.json``) means ``shannon:tuned.json``.

:func:`evotune.spec.player.parse_player_ref` is the one parser of the text, :func:`resolve_player`
makes the player; bad strings raise ConfigError / WeightsError with one line saying what to give
(the CLI turns that into exit 2 before anything is played).
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from ..engine.evaluation import spec_evaluation
from ..errors import ConfigError, FieldError
from ..limits import Limits
from ..players import PlayerSpec
from ..players.external import engine_for
from ..players.spec import check_engine_spec, player_from_engine_spec
from ..spec.file import load_engine_spec
from ..spec.model import EngineSpec
from ..spec.player import REFERENCE_ALIAS, parse_player_ref
from ..weightsio import weights_for

__all__ = ["REFERENCE_ALIAS", "check_clock_applies", "check_player_starts", "check_players",
           "close_external_players", "limit_notes",
           "resolve_player", "resolve_player_list", "resolve_players", "split_player",
           "unique_names"]


def _spec(token: str) -> EngineSpec:
    return load_engine_spec("shannon" if token == REFERENCE_ALIAS else token)


def split_player(arg: str) -> tuple[str, str | None]:
    """``SPEC[:WEIGHTS]`` -> (spec token, weights path or None): :func:`parse_player_ref`'s
    pair."""
    return parse_player_ref(arg).as_pair()


def resolve_player(arg: str, *, name: str | None = None) -> PlayerSpec:
    """The player named by ``SPEC[:WEIGHTS]`` (see the module docstring); ``name`` overrides
    the label shown in PGN headers and results (default: the spec's name - 'shannon' for its
    old spelling 'reference' -, or 'SPEC:STEM' with weights; a bare weights file: its stem)."""
    ref = parse_player_ref(arg)
    spec, weights_path = load_engine_spec(ref.spec_name), ref.file
    if weights_path is None:
        return player_from_engine_spec(spec, None, name=name or spec.name)
    stem = Path(weights_path).stem
    label = stem if ref.bare_file else f"{spec.name}:{stem}"
    evaluation = spec_evaluation(spec)
    if evaluation is not None and evaluation.reads_file:  # the file is a net
        return player_from_engine_spec(spec, None, name=name or label, net=weights_path)
    weights = weights_for(spec, weights_path)
    return player_from_engine_spec(spec, weights, name=name or label)


def unique_names(players) -> tuple[PlayerSpec, ...]:
    """The players with repeated names told apart ('-A', '-B', ... in order)."""
    players = list(players)
    counts: dict[str, int] = {}
    for p in players:
        counts[p.name] = counts.get(p.name, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for p in players:
        if counts[p.name] > 1:
            k = seen.get(p.name, 0)
            seen[p.name] = k + 1
            p = replace(p, name=f"{p.name}-{chr(ord('A') + k) if k < 26 else k + 1}")
        out.append(p)
    return tuple(out)


def resolve_players(a: str, b: str) -> tuple[PlayerSpec, PlayerSpec]:
    """Players A and B; equal names get '-A' / '-B' so the PGN tells them apart."""
    pa, pb = unique_names((resolve_player(a), resolve_player(b)))
    return pa, pb


def resolve_player_list(text: str) -> tuple[PlayerSpec, ...]:
    """Comma-separated ``SPEC[:WEIGHTS],...`` (e.g. a gauntlet's --opponents); repeated names
    are told apart as in :func:`resolve_players`."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or not all(items):
        raise ConfigError(f"player list '{text}': an empty entry; give SPEC[:WEIGHTS],... "
                          "e.g. shannon,pst:tuned.json")
    return unique_names(resolve_player(t) for t in items)


def check_players(*args: str) -> None:
    """Before a match: the engine of each player ``SPEC[:WEIGHTS]`` can play it, checked as a
    run checks its engine (:func:`~evotune.players.spec.check_engine_spec`: a UCI engine is
    started once, every option the spec names must be declared, and every weight's bounds must
    map into its option's range). EngineError with one line otherwise."""
    for spec in dict.fromkeys(parse_player_ref(arg).spec for arg in args):  # each engine once
        check_engine_spec(_spec(spec))


def check_clock_applies(limits: Limits, players) -> None:
    """FieldError when a clock (``tc`` or ``movetime``) is set and every player is a built-in
    alpha-beta search, which plays to its depth whatever the clock: the limit would be ignored
    without a word. A match with any other player (a UCI engine, a uct or probability spec)
    plays the clock; a built-in alpha-beta player among them still plays its depth."""
    field = "tc" if limits.tc is not None else "movetime" if limits.movetime else None
    if field is None or not all(p.is_builtin and p.search.is_alphabeta for p in players):
        return
    given = limits.tc.given() if limits.tc is not None else f"{limits.movetime:g}"
    raise FieldError(field, f"{given}: every player here is the built-in alpha-beta engine, "
                     "which plays to its depth whatever the clock; give --depth, or play a "
                     "'uci' spec (e.g. shannon-uci, the same engine through UCI) or a uct or "
                     "probability spec under the clock")


DEEP_LEAF = 5
"""A UCT leaf search at least this deep is noted when its budget is counted in simulations."""


def limit_notes(limits: Limits, players) -> list[str]:
    """One line per built-in UCT player whose budget counts simulations with alpha-beta leaves
    of depth DEEP_LEAF or more: each simulation is then a whole search of up to millions of
    nodes, so ``--nodes 50`` is minutes a move, which a user who read --nodes as nodes (and
    gave --depth, which UCT does not use) would take for a hang."""
    notes: list[str] = []
    for p in players:
        s = p.search if p.is_builtin else None
        if (s is None or s.algorithm != "uct" or s.policy != "alphabeta"
                or s.policy_depth < DEEP_LEAF or s.budget_unit == "nodes"):
            continue
        notes.append(f"{p.name} searches {s.budget(limits.nodes):,} simulations a move, each "
                     f"leaf a depth-{s.policy_depth} alpha-beta search (up to millions of nodes; "
                     "--depth is alpha-beta's): set [search] budget = \"nodes\" in its spec "
                     "to count --nodes in nodes")
    return list(dict.fromkeys(notes))


def check_player_starts(player: PlayerSpec) -> None:
    """Start an external player once (EngineError when its command does not start or answer)."""
    if not player.is_builtin:
        engine_for(player)


def close_external_players() -> None:
    """Quit the external engines this process started (python-chess runs each engine on a
    non-daemon thread, so a process that leaves one running does not exit)."""
    external = sys.modules.get("evotune.players.external")
    if external is not None:
        external.close_all()
