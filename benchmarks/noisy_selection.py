"""Selection under noise, simulated: the strategies' real ask/tell code on a landscape whose Elo
is known, with games drawn from the Elo difference instead of played.

Why: a fine-tuning study costs hours of games per run and seed; the choice of a selection rule
and its defaults needs dozens of runs. Here each strategy (the classes of evotune.strategies,
unchanged) tunes a 55-weight space from a start a few dozen Elo below the optimum; a mini-match
between vectors a and b is a sequence of colour-swapped game pairs whose results are drawn from
the logistic Elo difference E(a) - E(b) with a draw rate, and the stop rules ('decisive',
'sprt') are applied pair by pair as the match runner applies them. The figure is the true Elo
of each run's recommendation against the start, mean and spread over seeds.

    python benchmarks/noisy_selection.py --budget 20000 --seeds 8
    python benchmarks/noisy_selection.py --only de-race,cmaes --budget 20000 --seeds 4
    python benchmarks/noisy_selection.py --only de-paper,de-race,de-model --budget 5000
    python benchmarks/noisy_selection.py --only spsa,cmaes-mirrored --every 2500 \
        --figure elo-vs-games.png --json elo-vs-games.json

``--every N`` records each run's recommendation (its true Elo over the start) every N games,
and ``--figure`` draws them for every config on one figure: which method is ahead at each
budget, with the 95% interval of the mean over seeds; ``--json`` writes the figures drawn.

A config whose selection is 'model' is told the rating model over every simulated game
(evotune.match.rating, fitted after each generation as the run loop does). Besides the Elo gain,
each line says how the selection decided: the share of true improvements (challengers truly
better than their incumbent) that replaced it ('better in'), the share of the others that were
kept out ('worse out'), and the true Elo of the population mean ('mean rec': the same as the
recommendation except for 'model' configs, which recommend the individual rated highest).

The landscape (E(x) = -sum_i h_i ((x_i - x*_i) / s_i)^2, s_i the fine-tuning scale of weight i,
h_i log-uniform in [0.02, 2] Elo, the optimum drawn so that the start sits ``--gap`` Elo below
it) is a model: it says which rules drift and which gain under this noise, not what a real
evaluation gains. The real games are in docs/results/finetune-study.md.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evotune.match.rating import GameResult  # noqa: E402
from evotune.match.scoring import SprtParams, sprt  # noqa: E402
from evotune.space import WeightSpace, finetune_scale  # noqa: E402
from evotune.strategies import make_strategy  # noqa: E402
from evotune.strategies.base import MatchOutcome  # noqa: E402
from evotune.tuning.rated import RatedEvidence, model_scale  # noqa: E402

N_FREE = 55
DRAW = 0.2
"""Draw rate of a game between near-equal players (depth-3 games of the study: 15-23%)."""


class Landscape:
    """A quadratic Elo landscape around an optimum, with games drawn from Elo differences."""

    def __init__(self, seed: int, gap: float) -> None:
        rng = np.random.default_rng(10_000 + seed)
        names = tuple(f"w{i}" for i in range(N_FREE + 1))
        ref = np.concatenate([[100.0], rng.uniform(20, 900, N_FREE)])
        lower = np.concatenate([[100.0], np.zeros(N_FREE)])
        upper = np.concatenate([[100.0], np.full(N_FREE, 2000.0)])
        self.space = WeightSpace(names=names, lower=tuple(lower), upper=tuple(upper),
                                 reference=tuple(np.rint(ref)), fixed=(True,) + (False,) * N_FREE,
                                 init_low=0.0, init_high=2000.0)
        self.start = self.space.reference_array
        self.scale = finetune_scale(self.start, lower, upper)
        self.h = np.exp(rng.uniform(math.log(0.02), math.log(2.0), N_FREE + 1))
        self.h[0] = 0.0
        z = rng.standard_normal(N_FREE + 1)
        z[0] = 0.0
        z *= math.sqrt(gap / float(np.sum(self.h * z * z)))  # E(start) = -gap
        self.opt = self.start + z * self.scale
        self.rng = np.random.default_rng(20_000 + seed)
        self.games = 0
        self.log: list[GameResult] = []  # every game, for the rating model


    def elo(self, x) -> float:
        d = (np.asarray(x, dtype=np.float64) - self.opt) / self.scale
        return -float(np.sum(self.h * d * d))

    def pair(self, a, b) -> int:
        """A's points in one colour-swapped pair (0..4)."""
        p = 1.0 / (1.0 + 10.0 ** (-(self.elo(a) - self.elo(b)) / 400.0))
        win = max(0.0, p - DRAW / 2)
        u = self.rng.random(2)
        self.games += 2
        points = [2 if v < win else 1 if v < win + DRAW else 0 for v in u]
        a, b = tuple(float(x) for x in a), tuple(float(x) for x in b)
        for pts in points:
            self.log.append(GameResult(key=(len(self.log), 0, 0, 0), a=a, b=b, score=pts / 2))
        return int(sum(points))

    def play(self, req) -> MatchOutcome:
        """One request, with its stop rule applied pair by pair."""
        penta = [0] * 5
        pa = pairs = 0
        verdict = None
        params = SprtParams(*req.sprt) if req.stop == "sprt" else None
        while 2 * pairs < req.games:
            pts = self.pair(req.a, req.b)
            penta[pts] += 1
            pa += pts
            pairs += 1
            n = 2 * pairs
            if req.stop == "decisive" and (pa > req.games or 2 * n - pa >= req.games):
                break  # the verdict (strictly more points) is settled
            if params is not None:
                verdict = sprt(penta, params).verdict
                if verdict is not None:
                    break
        n = 2 * pairs
        return MatchOutcome(points_a=pa, points_b=2 * n - pa, games=n, verdict=verdict)


CONFIGS = {
    "de-paper": ("de", {"init": "reference", "finetune": True}),
    "de-race": ("de", {"init": "reference", "finetune": True, "selection": "race"}),
    "jde-race": ("jde", {"init": "reference", "finetune": True, "selection": "race"}),
    "ea-race": ("ea", {"init": "reference", "finetune": True, "selection": "race"}),
    "de-model": ("de", {"init": "reference", "finetune": True, "selection": "model"}),
    "jde-model": ("jde", {"init": "reference", "finetune": True, "selection": "model"}),
    "ea-model": ("ea", {"init": "reference", "finetune": True, "selection": "model"}),
    "de-linear": ("de", {"init": "reference", "finetune": True, "selection": "model",
                         "model_form": "linear"}),
    "jde-linear": ("jde", {"init": "reference", "finetune": True, "selection": "model",
                           "model_form": "linear"}),
    "ea-linear": ("ea", {"init": "reference", "finetune": True, "selection": "model",
                         "model_form": "linear"}),
    "cmaes": ("cmaes", {"init": "reference", "finetune": True, "np": 20}),
    # a run's defaults from earlier weights (mirrored pairs, cmean 0.1), and with UH-CMA-ES
    "cmaes-mirrored": ("cmaes", {"init": "reference", "finetune": True, "np": 20,
                                 "mirrored": True, "cmean": 0.1}),
    "cmaes-uh": ("cmaes", {"init": "reference", "finetune": True, "np": 20, "mirrored": True,
                           "cmean": 0.1, "noise": True}),
    "spsa": ("spsa", {"init": "reference", "finetune": True}),
    "quad": ("quad", {"init": "reference"}),
    "spsa-own-draws": ("spsa", {"init": "reference", "finetune": True}),  # rounding of old runs
}


def evidence(land: Landscape, strategy) -> RatedEvidence | None:
    """The run loop's rating model of ``strategy`` (None: it asks for none)."""
    request = strategy.rating_model()
    if request is None:
        return None
    return RatedEvidence((), request=request, scale=model_scale(land.space))


def run(name: str, params: dict, *, seed: int, budget: int, gap: float, every: int = 0
        ) -> tuple[float, int, list[int], float, list[float]]:
    """(true Elo of the recommendation over the start, games, decisions, true Elo of the
    population mean over the start, the recommendation's true Elo at every ``every`` games):
    decisions counts [true improvements accepted, true improvements in all, others rejected,
    others in all]; a config with selection 'model' recommends by the rule 'rated', the others
    by 'mean'; a checkpoint is read after the first generation that reaches it."""
    strategy, base = CONFIGS.get(name, (name, {"init": "reference"}))
    land = Landscape(seed, gap)
    p = {**base, **params}
    if strategy in ("spsa", "cmaes") or strategy.startswith("ng:"):
        p.setdefault("budget", budget)
    s = make_strategy(strategy, land.space, params=p, seed=seed)
    if name.startswith("spsa-own-draws"):  # each side of a perturbation its own rounding draw
        s.rounding = "independent"
    model = s.params.get("selection") == "model"
    decisions = [0, 0, 0, 0]
    rule = "rated" if model else "mean"
    ev = evidence(land, s)
    told = 0
    base = land.elo(land.start)
    curve: list[float] = []
    while land.games < budget:
        requests = s.ask()
        outcomes = [land.play(r) for r in requests]
        if ev is not None:
            ev.add(land.log[told:])  # the games of this generation, as the run loop adds them
            told = len(land.log)
            outcomes = ev.rate(requests, outcomes)
        before = s.population.copy()
        s.tell(outcomes, model=None if ev is None else ev.view())
        if s.keeps_population() and all(len(r.tag) == 1 for r in requests):
            for r in requests:  # one challenger per incumbent: did the better one win?
                k = r.tag[0]
                better = land.elo(r.a) > land.elo(r.b)
                moved = not np.array_equal(s.population[k], before[k])
                decisions[0 if better else 2] += moved if better else not moved
                decisions[1 if better else 3] += 1
        while every and land.games >= every * (len(curve) + 1) and len(curve) < budget // every:
            curve.append(land.elo(s.recommended(rule)) - base)
    return (land.elo(s.recommended(rule)) - base, land.games, decisions,
            land.elo(s.recommended("mean")) - base, curve)


def parse_extra(text: str) -> dict:
    out: dict = {}
    for item in filter(None, text.split(";")):
        k, v = item.split("=")
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = {"true": True, "false": False}.get(v, v)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(CONFIGS),
                    help="Comma-separated configs; NAME+k=v;k=v adds strategy parameters.")
    ap.add_argument("--budget", type=int, default=20_000, help="Games per run.")
    ap.add_argument("--seeds", type=int, default=4, help="Runs (landscapes) per config.")
    ap.add_argument("--gap", type=float, default=45.0, help="Elo between the start and the optimum.")
    ap.add_argument("--every", type=int, default=0,
                    help="Games between checkpoints of the recommendation (0: none).")
    ap.add_argument("--figure", type=Path, default=None,
                    help="PNG of every config's Elo against games (needs --every).")
    ap.add_argument("--json", type=Path, default=None, help="The checkpoints as JSON.")
    args = ap.parse_args(argv)
    if (args.figure or args.json) and args.every <= 0:
        ap.error("--figure and --json need --every N (games between checkpoints)")
    curves: dict[str, dict] = {}
    print(f"budget {args.budget} games, {args.seeds} seeds, start {args.gap:g} Elo below the "
          f"optimum, draw rate {DRAW}")
    print(f"{'config':44s} {'Elo vs start (mean +- sd)':>26s} {'min':>7s} {'games':>7s} "
          f"{'better in':>9s} {'worse out':>9s} {'mean rec':>8s} {'s':>6s}")
    for item in args.only.split(","):
        name, _, extra = item.partition("+")
        params = parse_extra(extra)
        t0 = time.perf_counter()
        res = [run(name, params, seed=k + 1, budget=args.budget, gap=args.gap,
                   every=args.every) for k in range(args.seeds)]
        if args.every:
            elo = np.array([r[4] for r in res], dtype=np.float64)  # (seeds, checkpoints)
            curves[item] = {"games": [args.every * (j + 1) for j in range(elo.shape[1])],
                            "mean": elo.mean(axis=0).round(2).tolist(),
                            "ci95": (1.96 * elo.std(axis=0, ddof=1) / math.sqrt(len(elo))
                                     if len(elo) > 1 else 0 * elo[0]).round(2).tolist(),
                            "seeds": elo.round(2).tolist()}
        gains = np.array([r[0] for r in res])
        games = int(np.mean([r[1] for r in res]))
        d = np.sum([r[2] for r in res], axis=0)
        share = [f"{a / b:9.2f}" if b else f"{'-':>9s}" for a, b in ((d[0], d[1]), (d[2], d[3]))]
        print(f"{item:44s} {gains.mean():+12.1f} +- {gains.std():5.1f}          "
              f"{gains.min():+7.1f} {games:7d} {share[0]} {share[1]} "
              f"{np.mean([r[3] for r in res]):+8.1f} "
              f"{time.perf_counter() - t0:6.1f}", flush=True)
    setup = {"budget": args.budget, "seeds": args.seeds, "gap": args.gap, "every": args.every,
             "draw": DRAW}
    if args.json:
        args.json.write_text(json.dumps({"setup": setup, "curves": curves}, indent=1) + "\n")
        print(f"wrote {args.json}")
    if args.figure:
        draw_figure(curves, setup, args.figure)
        print(f"wrote {args.figure}")
    return 0


def draw_figure(curves: dict[str, dict], setup: dict, path: Path) -> None:
    """Every config's mean true Elo over the start against games, with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    for j, (item, c) in enumerate(curves.items()):
        x = np.array(c["games"]) + (j - len(curves) / 2) * setup["every"] * 0.02  # no overlap
        ax.errorbar(x, c["mean"], yerr=c["ci95"], marker="o", ms=3, capsize=2, label=item)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("games")
    ax.set_ylabel("true Elo of the recommendation over the start")
    ax.set_title(f"Selection simulator: {setup['seeds']} seeds, start {setup['gap']:g} Elo "
                 "below the optimum", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
