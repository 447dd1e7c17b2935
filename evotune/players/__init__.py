"""Players: things that play moves.

A :class:`PlayerSpec` is plain data (it crosses process boundaries): either the built-in engine
with a weight vector or a network file (its :attr:`PlayerSpec.evaluation`), or an external UCI engine started
by a command with UCI options. Worker processes turn specs into live players (one engine process
per side, reused); two built-in players play a whole game inside the numba core
(``evotune.engine.play_game``), any other pairing is played move by move on a python-chess board
by :mod:`evotune.players.gameloop`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..engine.evaluation import SHANNON, Evaluation, evaluation_of
from ..space import Weights
from ..spec.searchsettings import SearchSettings


@dataclass(frozen=True)
class PlayerSpec:
    """Plain-data description of a player."""

    name: str
    """Name shown in PGN headers and reports."""
    kind: str = "builtin"
    """'builtin' (evotune's engine) or 'uci' (an external engine)."""
    weights: tuple[float, ...] = ()
    """Weight vector in evotune units (builtin: the evaluation; uci: what the options encode): a
    :class:`~evotune.space.Weights` (checked when made) for players made by :func:`builtin` and
    :func:`~evotune.players.spec.player_from_engine_spec`."""
    command: tuple[str, ...] = ()
    """Command line of a 'uci' engine."""
    options: tuple[tuple[str, object], ...] = ()
    """UCI options set once at start (the spec's fixed options); part of the engine's identity."""
    weight_options: tuple[tuple[str, object], ...] = ()
    """The weights as UCI options (mapped to engine names and scales): sent with ``setoption``
    before each game to the same live process, never a reason to restart it."""
    features: str = "shannon"
    """The name of a builtin player's evaluation (evotune/spec/features.py), or 'nnue': the
    plain-data form that crosses a process boundary; :attr:`evaluation` is its value."""
    search: SearchSettings = SearchSettings()
    """How a builtin player searches (its numeric parameters set from the spec's weights)."""
    net: str = ""
    """A builtin 'nnue' player's network file (absolute path; read where the games are played)."""
    net_checksum: str = ""
    """That net's checksum when the player was made (a file changed since is refused)."""

    @property
    def is_builtin(self) -> bool:
        return self.kind == "builtin"

    @property
    def evaluation(self) -> Evaluation:
        """How a builtin player evaluates: its feature set or net as an Evaluation
        (engine/evaluation.py), which says what the engine takes for it."""
        return evaluation_of(self.features)


def builtin(weights, name: str = "evotune", evaluation: Evaluation = SHANNON,
            search: SearchSettings = SearchSettings()) -> PlayerSpec:
    """The built-in engine with ``weights`` of the linear ``evaluation``, searching by ``search``:
    a Weights of the set's names is taken as it is (it was checked when made), anything else is
    checked here."""
    names = evaluation.names
    if not (isinstance(weights, Weights) and weights.names == names):
        weights = Weights(weights, names, what=f"{name} weights", label=names[:8])
    return PlayerSpec(name=name, kind="builtin", weights=weights, features=evaluation.name,
                      search=search)
