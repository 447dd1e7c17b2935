"""The run loop's Solver: opened explicitly (:meth:`Solver.open` repairs the store and writes
generation 0, its constructor touches nothing), a context manager that writes the PGN still being
made and stops its process on leaving (an exception's too), and ``step()`` returning the stored
:class:`Generation` record; stepped by hand it plays what :func:`execute` plays."""
from __future__ import annotations

import dataclasses

import pytest

from evotune.kinds.games.config import build_run_config
from evotune.kinds.games.lifecycle import new_run
from evotune.kinds.games.solver import Solver, execute
from evotune.runs.records import Generation

TINY = dict(population=4, generations=2, games=2, depth=1, seed=5, openings="book", workers=1)


def _timeless(gen: Generation) -> Generation:
    return dataclasses.replace(gen, seconds=0.0, seconds_total=0.0)


def test_a_solver_opened_and_stepped_by_hand_stores_what_execute_stores(tmp_path):
    cfg = build_run_config(**TINY)
    store, plan = new_run(cfg, out_dir=tmp_path, run_id="hand")
    Solver(store, plan)  # made, not opened: nothing is read or written
    assert not store.generations_dir.exists() or not any(store.generations_dir.iterdir())
    assert store.read_state() is None
    steps = []
    with Solver.open(store, plan, workers=1) as solver:
        assert store.read_generation(0).generation == 0 and solver.strategy.generation == 0
        assert solver.pgn_pool is None  # the PGN process starts with the first generation
        for gen in solver:
            steps.append(gen)
        assert solver.pgn_pool is not None
    assert solver.pgn_pool is None  # leaving the block stopped it
    assert [type(g) for g in steps] == [Generation, Generation]
    assert [g.generation for g in steps] == [1, 2]
    assert steps == [store.read_generation(1), store.read_generation(2)]
    assert steps[-1].games_total == solver.games_total == sum(g.games for g in steps) > 0
    assert steps[-1].stats["recommended"] == list(solver.strategy.recommended())

    other, other_plan = new_run(cfg, out_dir=tmp_path, run_id="executed")
    summary = execute(other, other_plan)
    assert summary.generation == 2 and summary.games == steps[-1].games_total
    assert [_timeless(other.read_generation(g)) for g in (1, 2)] == \
        [_timeless(g) for g in steps]
    assert store.pgn_path.read_text() == other.pgn_path.read_text()
    assert store.pgn_game_count() == solver.games_total


def test_leaving_the_block_on_an_exception_writes_the_pgn_and_stops_its_process(tmp_path):
    store, plan = new_run(build_run_config(**TINY), out_dir=tmp_path, run_id="broken")
    with pytest.raises(KeyboardInterrupt):
        with Solver.open(store, plan, workers=1) as solver:
            first = solver.step()
            raise KeyboardInterrupt
    assert solver.pgn_pool is None
    assert store.pgn_game_count() == first.games > 0  # the generation's games reached games.pgn
    # the run goes on from its stored generation 1
    with Solver.open(store, plan, workers=1) as again:
        assert (again.strategy.generation, again.games_total) == (1, first.games)
        assert again.step().generation == 2
