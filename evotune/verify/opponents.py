"""Who a verification plays and the checks of its limits against them: the run's reference
(or start) and initial mean, or the players named by ``--opponents``; a clock that no player
plays is refused before the first game."""
from __future__ import annotations

import math

from ..errors import ConfigError
from ..limits import LimitChanges, Limits
from ..match.resolve import check_clock_applies, resolve_player, unique_names
from ..players import PlayerSpec
from ..players.spec import player_from_engine_spec
from ..runs.rundata import RunData, initial_mean


def check_clock_given(changes: LimitChanges | None, limits: Limits, players) -> None:
    """A clock given on the command line (``changes``: --tc, --movetime) with only built-in
    alpha-beta players is refused (:func:`~evotune.match.resolve.check_clock_applies`); a run's
    own stored limits are played as they were."""
    given = changes.given() if changes is not None else {}
    if "tc" in given or "movetime" in given:
        check_clock_applies(limits, players)


def check_clock_matters(also_tc: str | None, players) -> None:
    """ConfigError when ``--also-tc`` is the second limit and every player is a built-in
    alpha-beta search, which plays to its depth whatever the clock: the second leg would
    replay the first one's games."""
    if also_tc is None or not all(p.is_builtin and p.search.is_alphabeta for p in players):
        return
    raise ConfigError(f"--also-tc {also_tc}: every player here is a built-in alpha-beta "
                      "search, which plays to its depth whatever the clock, so the second limit "
                      "would replay the same games; give --also-depth instead")


def named_opponents(named: tuple[str, ...]) -> list[tuple[str, PlayerSpec]]:
    """(label, PlayerSpec) of each ``--opponents SPEC[:WEIGHTS]`` (ConfigError when unknown)."""
    players = unique_names(resolve_player(arg) for arg in named)
    return [(p.name, p) for p in players]


def reference_label(data: RunData) -> str:
    """What the run's reference weights are to a reader: 'start' for a run from given weights
    (its spec's reference values are the weights it started from:
    :attr:`~evotune.runs.registry.WeightsConfig.starts_from_given`), else 'reference' (the
    spec's own values)."""
    return "start" if data.config.starts_from_given else "reference"


def run_opponents(data: RunData, spec, named: tuple[str, ...]) -> list[tuple[str, PlayerSpec]]:
    """(label, PlayerSpec) of each opponent: the players named ``SPEC[:WEIGHTS]``, or the run's
    reference weights and initial mean (ConfigError before any game when one is unknown). An
    initial mean equal to the reference (SPSA, CMA-ES or nevergrad started at it, as every
    fine-tuning from earlier weights is) is the same match: it is played once, as the
    reference."""
    if named:
        return named_opponents(named)
    out = []
    reference = tuple(float(v) for v in data.reference)
    initial = initial_mean(data)
    pairs = [(reference_label(data), reference)]
    if tuple(float(v) for v in initial) != reference:
        pairs.append(("initial mean", initial))
    for label, weights in pairs:
        if not all(math.isfinite(v) for v in weights):
            raise ConfigError(f"run {data.run_id}: the {label} weights are unknown (engine spec "
                              f"'{data.config.engine}' is unavailable); restore it to "
                              "verify")
        out.append((label, player_from_engine_spec(spec, weights, name=label.replace(" ", "-"))))
    return out
