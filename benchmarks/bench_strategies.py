"""Per-generation overhead of each strategy: ask + tell time against the time of its games.

    python benchmarks/bench_strategies.py [--generations 5] [--depth 3] [--games-timed 8]
                                          [--sizes 6,800] [--strategies de,jde,ea,spsa,...]

First the time of one game is measured: the built-in engine (shannon weights) plays
``--games-timed`` games at ``--depth`` from the packaged book, one process, in this process. Then
every strategy runs ``--generations`` generations on a weight space of 6 (shannon) and of 800
weights (free weights named in the feature-set pattern, bounds [0, 1000]) with synthetic outcomes
(no games), and its ask + tell time per generation is timed. The share printed is

    overhead = strategy seconds / (strategy seconds + games of a generation x game seconds / W)

for W = 1 and W = 2 worker processes (the games of a generation run in parallel; ask and tell
run in the main process). The 800-weight games are taken to cost as much as shannon's: a larger
evaluation only makes games slower and the share smaller. TD is left out (its tell needs the
PV-leaf features of real games; bench_run_overhead.py measures the run loop as a whole).
Target: under 2% at depth 3.
Also printed: the time to restore cmaes / ng:NAME from their state (replaying every told
generation), which a resume or an export pays once.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from evotune.seeding import generator
from evotune.space import WeightSpace
from evotune.strategies import MatchOutcome, make_strategy, strategy_class

DEFAULT = "de,jde,ea,spsa,cmaes,ng:NGOpt,ng:TBPSA"


def game_seconds(depth: int, games: int) -> float:
    """Median wall time of one game of the built-in engine (shannon reference weights)."""
    from evotune.limits import Limits
    from evotune.match import Fixture, MatchSettings, run_fixtures, warm_up
    from evotune.paths import DEFAULT_BOOK
    from evotune.players import builtin
    from evotune.space import SHANNON_REFERENCE

    warm_up()
    settings = MatchSettings(limits=Limits(depth=depth), openings=str(DEFAULT_BOOK))
    fx = Fixture(key=(0, 0), a=builtin(SHANNON_REFERENCE, name="a"),
                 b=builtin(SHANNON_REFERENCE, name="b"), games=games)
    (result,) = run_fixtures([fx], settings=settings, seed=1, workers=1)
    return float(np.median([r.seconds for r in result.records]))


def big_space(n: int) -> WeightSpace:
    names = tuple(f"pst.mg.knight.s{i}" for i in range(n))
    return WeightSpace(names=names, lower=(0.0,) * n, upper=(1000.0,) * n,
                       reference=(500.0,) * n, fixed=(False,) * n)


def outcomes(requests, rng) -> list[MatchOutcome]:
    out = []
    for r in requests:
        pa = int(rng.integers(0, 2 * r.games + 1))
        out.append(MatchOutcome(points_a=pa, points_b=2 * r.games - pa, games=r.games))
    return out


def time_strategy(name: str, space: WeightSpace, generations: int
                  ) -> tuple[float, float, float]:
    """(seconds per generation for ask + tell, games per generation, restore seconds)."""
    rng = generator(1, 99)
    params = {"np": 20, "games": 4} if "np" in strategy_class(name).PARAMS else {"games": 4}
    s = make_strategy(name, space, params=params, seed=1)
    games = 0
    t0 = time.perf_counter()
    for _ in range(generations):
        reqs = s.ask()
        games += sum(r.games for r in reqs)
        s.tell(outcomes(reqs, rng))
    per_gen = (time.perf_counter() - t0) / generations
    state = s.state()
    t1 = time.perf_counter()
    strategy_class(name).from_state(space, params=params, seed=1, state=state)
    return per_gen, games / generations, time.perf_counter() - t1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=5)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--games-timed", type=int, default=8)
    ap.add_argument("--sizes", default="6,800")
    ap.add_argument("--strategies", default=DEFAULT)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    g = game_seconds(args.depth, args.games_timed)
    print(f"game_seconds (depth {args.depth}, median of {args.games_timed}): {g:.4f}")
    print(f"{'weights':>7} {'strategy':<12}{'ask+tell s/gen':>15}{'games/gen':>10}"
          f"{'share W=1':>11}{'share W=2':>11}{'restore s':>11}")
    for n in (int(x) for x in args.sizes.split(",")):
        space = WeightSpace() if n == 6 else big_space(n)
        for name in args.strategies.split(","):
            per_gen, games, restore = time_strategy(name, space, args.generations)
            shares = [per_gen / (per_gen + games * g / w) for w in (1, 2)]
            print(f"{n:>7} {name:<12}{per_gen:>15.4f}{games:>10.0f}{shares[0]:>11.4f}"
                  f"{shares[1]:>11.4f}{restore:>11.3f}")


if __name__ == "__main__":
    main()
