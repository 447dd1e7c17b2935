"""Players: things that play moves.

A :class:`PlayerSpec` is plain data (it crosses process boundaries): either the built-in engine
with a weight vector or a network file (``features = "nnue"``), or an external UCI engine started
by a command with UCI options. Worker
processes turn specs into live players (one engine process per side, reused); two built-in players
play a whole game inside the numba
core (``evotune.engine.play_game``), any other pairing is played move by move on a python-chess
board by :mod:`evotune.players.game`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..featuresets import feature_names
from ..space import check_weights


@dataclass(frozen=True)
class PlayerSpec:
    """Plain-data description of a player."""

    name: str
    """Name shown in PGN headers and reports."""
    kind: str = "builtin"
    """'builtin' (evotune's engine) or 'uci' (an external engine)."""
    weights: tuple[float, ...] = ()
    """Weight vector in evotune units (builtin: the evaluation; uci: what the options encode)."""
    command: tuple[str, ...] = ()
    """Command line of a 'uci' engine."""
    options: tuple[tuple[str, object], ...] = ()
    """UCI options set once at start (the spec's fixed options); part of the engine's identity."""
    weight_options: tuple[tuple[str, object], ...] = ()
    """The weights as UCI options (mapped to engine names and scales): sent with ``setoption``
    before each game to the same live process, never a reason to restart it."""
    features: str = "shannon"
    """Feature set of a builtin player's weights (evotune/featuresets.py), or 'nnue'."""
    net: str = ""
    """A builtin 'nnue' player's network file (absolute path; read where the games are played)."""
    net_checksum: str = ""
    """That net's checksum when the player was made (a file changed since is refused)."""

    @property
    def is_builtin(self) -> bool:
        return self.kind == "builtin"


def builtin(weights, name: str = "evotune", features: str = "shannon") -> PlayerSpec:
    """The built-in engine with ``weights`` of feature set ``features`` (validated, stored as a
    tuple of floats)."""
    names = feature_names(features)
    w = check_weights(weights, size=len(names), names=names[:8], what=f"{name} weights")
    return PlayerSpec(name=name, kind="builtin", weights=tuple(float(x) for x in w),
                      features=features)

