"""The games kind's lifecycle glue: what the commands ask of a tuning run by games (new,
resume, execute, status, row, and the weights it recommends, its strategy restored from the
stored state). Its lifecycle is :mod:`evotune.kinds.games.lifecycle` (new, open, plan), its solver
:mod:`.solver`, its budget raises :mod:`.budget`, its lines :mod:`.view`."""
from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any, cast

import numpy as np

from ...errors import EvotuneError, Interrupted, StoreError
from ...reporting.tables import brief
from ...runs.finalcheck import FINAL_CHECK_DOCUMENT, final_check_block
from ...runs.records import Generation
from ...runs.registry import StoredKind
from ...runs.rundata import Recommendation, RunData, run_spec
from ...runs.runkind import Job, ResumeRequest, RunUI, Summary
from ...runs.runspec import check_run_net
from ...runs.store import Store
from ...space import WeightSpace
from ...strategies import strategy_class
from ...verify.text import describe_match
from ..view import elo_text, of_total, started
from ..weights import WeightsKind
from .budget import extended_config, extension_lines, extension_record
from .config import RunConfig, run_config_from_dict, validate_run_config
from .lifecycle import check_backend, new_run, open_run, tuning_games
from .plan import with_overrides
from .solver import execute
from .view import RunBar, check_text, step_text

log = logging.getLogger(__name__)


def _read_games(d: dict, config: dict, fmt: int) -> tuple[RunConfig, tuple]:
    return run_config_from_dict(config), ()


GAMES_STORED = StoredKind(RunConfig.kind, _read_games, takes_start=True,
                          format1=lambda config: True)
"""Tuning runs by games (:class:`RunConfig`) as the store reads them (every format-1 manifest
was a RunConfig's: a fit claims its own, :data:`evotune.kinds.fit.FIT_STORED`)."""

class GamesKind(WeightsKind):
    """Tuning runs by games: a population (or a search distribution) of weight vectors."""

    name = RunConfig.kind
    stored = GAMES_STORED
    reads = frozenset({"play", "x", "squares", "rule", "engine"})
    config_class = RunConfig

    def new(self, config: RunConfig, *, out_dir: str | Path, run_id: str | None, workers: int,
            ui: RunUI, **start: Any) -> Job:
        store, plan = new_run(config, out_dir=out_dir, run_id=run_id, **start)
        return Job(store=store, plan=plan, workers=workers)

    def budget(self, cfg: Any) -> int:
        return cfg.budget.max_games

    def population(self, cfg: Any) -> int:
        return cfg.population

    def resume(self, store: Store, request: ResumeRequest) -> Job:
        """The run opened to continue; a limit given is a raise of its budget, checked here
        and kept in the run before it plays on (:mod:`.budget`)."""
        generations, workers = request.generations, request.workers
        max_games, max_seconds = request.max_games, request.max_seconds
        backend, scheduler = request.play.backend, request.play.scheduler
        store, plan = open_run(store.root)
        state = store.current_state()
        extended, raised = extended_config(plan.config, run_id=store.run_id, state=state,
                                           tuning_games=tuning_games, generations=generations,
                                           max_games=max_games, max_seconds=max_seconds)
        plan = with_overrides(plan, backend=backend, scheduler=scheduler,
                              **{k: v for k, v in (("workers", workers),) if v is not None},
                              **{k: getattr(extended.budget, k) for k in raised})
        validate_run_config(plan.config)
        check_backend(plan.config)
        if raised:  # every check passed: the raise is kept before the run plays on
            store.extend(extended, extension_record(raised, state,
                                                    store.read_document(FINAL_CHECK_DOCUMENT)))
            log.info("run %s: budget raised (%s)", store.run_id, raised)
        return Job(store=store, plan=plan)

    def execute(self, job: Job, ui: RunUI) -> Summary:
        """Runs (or continues) a run to its end with a progress display; its summary lines."""
        store, plan = job.store, job.plan
        names = plan.spec.names
        ui.info(f"run {store.run_id} in {store.root}")
        bar = RunBar(plan.config, names, ui.progress("generation", 0, "games"))
        try:
            summary = execute(store, plan, progress=bar)
        except EvotuneError as exc:
            raise type(exc)(f"{exc} (run {store.run_id} is kept; continue it with "
                            f"'evotune resume {store.run_id}')") from None
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; every finished generation is stored: continue with "
                              f"'evotune resume {store.run_id}'") from None
        finally:
            bar.close()
        rec = brief(names, summary.recommended, lambda n, v: f"{n} {v:g}", sep=", ")
        check = summary.final_check
        what = "the strategy's" if check is None or check.better else "the start"
        lines = [f"run {summary.run_id}: {summary.generation} generations, {summary.games} "
                 f"games, {summary.seconds:.1f} s "
                 f"({summary.games / max(summary.seconds, 1e-9):.1f} games/s)",
                 f"recommended weights ({what}): {rec}"]
        if check is not None:
            # the check's block, then its verdict in words: the run's last line
            lines.extend(final_check_block(check, plan.limits))
            lines.append(check.sentence)
        return Summary(run_id=summary.run_id, lines=tuple(lines), record=summary)

    def status_info(self, store: Store, info: dict, last: Generation | None) -> dict:
        cfg = store.manifest().config
        check_run_net(store.root, cfg)  # a net-tuning run needs its net
        check = store.read_final_check(len(info["names"]) or None)
        if check is not None:
            info["final_check"] = {**check.to_json(), "sentence": check.sentence}
            info["guard"] = info["final_check"]  # its old key, kept for scripts that read it
            info["tuning_games"] = info["games"]
            info["games"] += check.games  # the run's games: its final check's included
        cls = strategy_class(cfg.strategy)
        if last is not None and cls.STEP:
            info["step"] = {k: float(last.stats[k]) for k in cls.STEP
                            if isinstance(last.stats.get(k), (int, float))}
        return info

    def describes(self, cfg: Any) -> tuple[bool, str]:
        """A population's deviations only for a strategy that keeps one; SPSA's vector is its
        theta, CMA-ES's and nevergrad's their distribution's mean."""
        cls = strategy_class(cfg.strategy)
        return cls.keeps_population(), cls.CENTRE

    def status_head(self, store: Store, info: dict, done: str) -> list[str]:
        cfg = store.manifest().config
        cls = strategy_class(cfg.strategy)
        np_text = f"NP {cfg.population}, " if cls.keeps_population() else ""
        planned = cfg.budget
        budget = f" (budget {planned.max_games:,})" if planned.max_games else ""
        lines = [f"run {store.run_id}: {cfg.strategy}, {np_text}generation "
                 f"{of_total(info['generation'], planned.generations)}, {info['games']:,} games"
                 f"{budget}, {done}"]
        step = step_text(cls, info.get("step", {}))
        if step:
            lines.append(f"  {step}")
        lines += extension_lines(store.manifest().extensions)
        verify = store.read_verify() or {}
        lines += [f"  verified: {describe_match(m)}" for m in verify.get("matches", [])]
        return lines

    def row(self, store: Store) -> tuple[str, ...]:
        cfg, state = store.manifest().config, store.current_state()
        done = state.generation if state else 0
        fin = "finished" if state and state.finished else "stopped"
        check = store.read_final_check()
        games = (state.games if state else 0) + (check.games if check else 0)
        budget = cfg.budget
        amount = f"{games:,}/{budget.max_games:,} games" if budget.max_games else f"{games:,} games"
        verify = store.read_verify() or {}
        result = [check_text(check)] if check is not None else []
        result += [elo_text(verify.get("matches", []))] if verify.get("matches") else []
        return (store.run_id, cfg.strategy, f"generation {of_total(done, budget.generations)}",
                amount, "; ".join(result) or "-", fin, started(store))

    def recommend(self, run: RunData, rule: str) -> Recommendation:
        """'mean': the population mean; 'better-half': the mean of the better half by the
        strategy's own ranking (DE/jDE: points of each individual's last match; EA: tournament
        score; TD: TD error); 'rated': the individual the rating model over every game rates
        highest (a run with selection=model). All come from the strategy restored from the stored state; when
        that cannot be restored (e.g. the engine spec changed), 'mean' falls back to the stored
        population's mean. A run whose final check found its weights no better than its start
        recommends the start."""
        g = run.last
        size = len(run.populations[-1])
        cfg = cast(RunConfig, run.config)  # the games kind's runs hold a RunConfig
        strategy = None
        if run.state is not None and run.state.generation == g:
            try:
                strategy = _restored_strategy(run, cfg)
            except (EvotuneError, KeyError, TypeError, ValueError) as exc:
                log.warning("run %s: cannot restore the strategy (%s)", run.run_id, exc)
        if strategy is not None:
            w = strategy.recommended(rule)
            if strategy.RECOMMENDS:  # one vector, whatever the rule (spsa, cmaes, ng)
                what = f"{strategy.RECOMMENDS} after generation {g}"
            elif rule == "mean":
                what = f"population mean of generation {g} ({size} individuals)"
            elif rule == "rated":
                what = (f"the individual of generation {g} the rating model over every game "
                        "rates highest (the final check plays the mean)")
            else:
                what = (f"mean of the better half ({max(1, size // 2)} of {size}) of generation "
                        f"{g}, ranked by {strategy.RANKED_BY}")
        elif rule == "mean":
            mean = run.populations[-1].mean(axis=0)
            try:
                space = _run_space(run, cfg)
                w = space.round(np.clip(mean, space.lower_array, space.upper_array))
            except EvotuneError:
                w = np.rint(mean)
            what = (f"population mean of generation {g} ({size} individuals, from the stored "
                    "population)")
        else:
            raise StoreError(f"run {run.run_id}: the rule '{rule}' needs the strategy state of "
                             f"generation {g}, which cannot be restored; use --recommend mean")
        weights = tuple(float(v) for v in w)
        if not all(math.isfinite(v) for v in weights):
            raise StoreError(f"run {run.run_id}: recommended weights are not finite ({weights})")
        check = run.final_check
        # the final check found them not better than the start; in a run that selects by the
        # rating model the check's verdict on its mean holds for its rated best too
        checked = check is not None and (check.tuned == weights
                                         or cfg.params_dict().get("selection") == "model")
        if check is not None and check.generation == g and checked and not check.better:
            return Recommendation(rule=rule, weights=check.start, generation=g,
                                  description=check.sentence)
        return Recommendation(rule=rule, weights=weights, generation=g,
                              description=what + ", rounded")


def _run_space(run: RunData, cfg: RunConfig) -> WeightSpace:
    return run_spec(run).space(init_low=cfg.start.low, init_high=cfg.start.high)


def _restored_strategy(run: RunData, cfg: RunConfig):
    params = cfg.strategy_params()
    cls = strategy_class(cfg.strategy)
    assert run.state is not None
    return cls.from_state(_run_space(run, cfg), params=params, seed=cfg.seed,
                          state=run.state.strategy)


GAMES = GamesKind()
"""The games kind (registered by :mod:`evotune.kinds`)."""
