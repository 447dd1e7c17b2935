"""Turn the player arguments of ``evotune match`` into PlayerSpecs.

A player is given as:

- ``reference``: the built-in engine with the reference weights (100, 300, 330, 500, 900, 10);
- a weights file (JSON): a list of six numbers or an object ``{name: value}`` (a missing fixed
  weight, the pawn, takes its reference value), validated against the Shannon WeightSpace;
- an engine spec (a ``.toml`` path or a name under ``engines/``): a builtin spec plays its
  reference weights, a 'uci' spec starts the external engine with its options.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from ..config import ENGINES_DIR, load_engine_spec, load_weights_file
from ..errors import ConfigError
from ..players import PlayerSpec, builtin


def _space():
    return load_engine_spec("shannon").space()


def weights_from_file(path: str | Path) -> tuple[float, ...]:
    """A Shannon weight vector from a JSON file (list of six numbers or {name: value})."""
    return tuple(float(x) for x in load_weights_file(path))


def resolve_player(arg: str) -> PlayerSpec:
    """The player named by a command-line argument (see the module docstring)."""
    if arg == "reference":
        return builtin(_space().reference_array, name="reference")
    p = Path(arg)
    if p.suffix.lower() == ".toml" or (not p.exists() and (ENGINES_DIR / f"{arg}.toml").is_file()):
        from ..players.spec import player_from_engine_spec

        return player_from_engine_spec(load_engine_spec(arg))
    if p.is_file():
        return builtin(weights_from_file(p), name=p.stem)
    raise ConfigError(f"player '{arg}': no such file; give 'reference', a weights .json file "
                      "(a list of six numbers or {name: value}) or an engine spec .toml")


def resolve_players(a: str, b: str) -> tuple[PlayerSpec, PlayerSpec]:
    """Players A and B; equal names get '-A' / '-B' so the PGN tells them apart."""
    pa, pb = resolve_player(a), resolve_player(b)
    if pa.name == pb.name:
        pa, pb = replace(pa, name=f"{pa.name}-A"), replace(pb, name=f"{pb.name}-B")
    return pa, pb


def check_player_starts(player: PlayerSpec) -> None:
    """Start an external player once (raises EngineError when its command does not start)."""
    if player.is_builtin:
        return
    from ..players.external import engine_for

    engine_for(player)


def close_external_players() -> None:
    """Quit the external engines this process started (python-chess runs each engine on a
    non-daemon thread, so a process that leaves one running does not exit)."""
    external = sys.modules.get("evotune.players.external")
    if external is not None:
        external.close_all()
