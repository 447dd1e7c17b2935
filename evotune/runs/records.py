"""The records of a run's progress (state, generations, the game log, verify.json), each with
exactly one reader and one validator (``parse_*``); the manifest's are in
:mod:`evotune.runs.manifest`, the reading and field checks they share in
:mod:`evotune.runs.recordio`.

Layout of a run directory::


    manifest.json            format, kind ('games', 'fit' or 'train'), resolved config, identity
                             (hashes of config, engine spec, openings; a fit's or a training's
                             data files too), a games run's start (init_from) -> Manifest
                             (:mod:`evotune.runs.manifest`)
    state.json               the commit point: generation, games, seconds, strategy state -> State
    generations/gen-NNNN.json one file per generation: population, matches, statistics and the
                             strategy state after it (gen-0000 = the initial population) -> Generation
    games.jsonl              append-only game log, one game record per line  -> GameLine
    games.pgn                every game in PGN (rebuilt from the log when it is behind)
    verify.json              the latest verification (written by ``evotune verify``)
    .lock                    the writer lock (fcntl.flock) and the holder's PID

A training (kind 'train') keeps checkpoint.npz, epochs/epoch-NNNN.json, initial.nnue and net.nnue
instead of generations and games (:mod:`evotune.runs.trainrecords` validates them).

Every other module reads runs through these parsers, never through dict keys with defaults of its
own. A record that fails its validator is reported as one line naming the file (and line): never a
traceback, never a guess.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreError
from .recordio import damaged, float_field, int_field, ints_field, json_object, opt_int_field, vector_field

GEN_FILE_RE = re.compile(r"^gen-(\d{4,})\.json$")
EPOCH_FILE_RE = re.compile(r"^epoch-(\d{4,})\.json$")
RESULTS = ("1-0", "0-1", "1/2-1/2")


@dataclass(frozen=True)
class MatchSummary:
    """One request's mini-match in a generation file (its ``matches``): who played, the points
    and, for gauntlet runs, the gauntlet scores that decided it."""

    a: tuple[float, ...]
    """Weights of A (the strategy's request)."""
    b: tuple[float, ...]
    """Weights of B."""
    points_a: int
    """A's points (win 2, draw 1, loss 0)."""
    points_b: int
    """B's points."""
    games: int
    """Games of the request."""
    tag: tuple[int, ...] = ()
    """The strategy's bookkeeping of the request."""
    wins: int | None = None
    """A's wins (None for gauntlet runs, whose requests are not played)."""
    draws: int | None = None
    """Draws."""
    losses: int | None = None
    """A's losses."""
    stopped_early: bool | None = None
    """The match stopped at its SPRT/early-stop bound."""
    gauntlet_points_a: int | None = None
    """Gauntlet runs: A's points against the opponents."""
    gauntlet_points_b: int | None = None
    """Gauntlet runs: B's points against the opponents."""
    gauntlet_games: int | None = None
    """Gauntlet runs: games each candidate played against the opponents."""

    def to_json(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(a=list(self.a), b=list(self.b), tag=list(self.tag))
        return {k: v for k, v in d.items() if v is not None}


def parse_match_summary(d, n: int, path: Path) -> MatchSummary:
    """The validator of one entry of a generation's ``matches``."""
    if not isinstance(d, dict):
        raise damaged(path, "'matches' must be a list of objects")
    stopped = d.get("stopped_early")
    if stopped is not None and not isinstance(stopped, bool):
        raise damaged(path, f"'stopped_early' must be true or false, not {stopped!r}")
    return MatchSummary(
        a=vector_field(d.get("a"), n, "matches.a", path),
        b=vector_field(d.get("b"), n, "matches.b", path),
        points_a=int_field(d, "points_a", path), points_b=int_field(d, "points_b", path),
        games=int_field(d, "games", path), tag=ints_field(d.get("tag", []), "tag", path),
        wins=opt_int_field(d, "wins", path), draws=opt_int_field(d, "draws", path),
        losses=opt_int_field(d, "losses", path), stopped_early=stopped,
        gauntlet_points_a=opt_int_field(d, "gauntlet_points_a", path),
        gauntlet_points_b=opt_int_field(d, "gauntlet_points_b", path),
        gauntlet_games=opt_int_field(d, "gauntlet_games", path))


@dataclass(frozen=True)
class GauntletCandidate:
    """One candidate's row of a generation's gauntlet: its results per opponent."""

    weights: tuple[float, ...]
    """The candidate's weights."""
    points: tuple[int, ...]
    """Points against each opponent (win 2, draw 1, loss 0), opponent order."""
    games: tuple[int, ...]
    """Games against each opponent."""
    wins: tuple[int, ...] = ()
    """Wins against each opponent."""
    draws: tuple[int, ...] = ()
    """Draws against each opponent."""
    losses: tuple[int, ...] = ()
    """Losses against each opponent."""

    def to_json(self) -> dict:
        return {k: list(v) for k, v in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class GauntletTable:
    """A generation's gauntlet (runs with ``--opponents``): every distinct candidate against the
    same opponents."""

    opponents: tuple[str, ...]
    """The opponents' names."""
    candidates: tuple[GauntletCandidate, ...]
    """One row per distinct candidate, in first-asked order."""

    def to_json(self) -> dict:
        return {"opponents": list(self.opponents),
                "candidates": [c.to_json() for c in self.candidates]}


def parse_gauntlet(d, n: int, path: Path) -> GauntletTable:
    """The validator of a generation's ``gauntlet``."""
    if not (isinstance(d, dict) and isinstance(d.get("opponents"), list)
            and isinstance(d.get("candidates"), list)
            and all(isinstance(o, str) for o in d["opponents"])
            and all(isinstance(c, dict) for c in d["candidates"])):
        raise damaged(path, "'gauntlet' must be an object with 'opponents' and 'candidates' lists")
    k = len(d["opponents"])
    rows = []
    for c in d["candidates"]:
        cols = {key: ints_field(c.get(key, []), f"gauntlet.{key}", path)
                for key in ("points", "games", "wins", "draws", "losses")}
        if len(cols["points"]) != k or len(cols["games"]) != k:
            raise damaged(path, f"a gauntlet candidate needs points and games for {k} opponents")
        rows.append(GauntletCandidate(weights=vector_field(c.get("weights"), n, "gauntlet.weights",
                                                      path), **cols))
    return GauntletTable(opponents=tuple(d["opponents"]), candidates=tuple(rows))


@dataclass(frozen=True)
class State:
    """state.json: the commit point of the run (the last generation stored completely)."""

    generation: int
    """Generations completed (0 = only the initial population)."""
    games: int
    """Games played in the whole run."""
    seconds: float
    """Wall time of the whole run."""
    finished: bool
    """True once a stop condition was reached."""
    strategy: dict
    """The strategy's state (``Strategy.state()``)."""

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def parse_state(data, path: Path) -> State:
    """The one validator of state.json."""
    d = json_object(data, path)
    finished = d.get("finished", False)
    if not isinstance(finished, bool):
        raise damaged(path, f"'finished' must be true or false, not {finished!r}")
    if not isinstance(d.get("strategy"), dict):
        raise damaged(path, "'strategy' must be an object")
    return State(generation=int_field(d, "generation", path), games=int_field(d, "games", path),
                 seconds=float_field(d, "seconds", path) if "seconds" in d else 0.0,
                 finished=finished, strategy=d["strategy"])


@dataclass(frozen=True)
class Generation:
    """generations/gen-NNNN.json: one generation (gen-0000 is the initial population)."""

    generation: int
    """Its number."""
    strategy: str
    """Strategy name."""
    names: tuple[str, ...]
    """Weight names, in engine order."""
    population: tuple[tuple[float, ...], ...]
    """The population after the generation, one row per individual."""
    mean: tuple[float, ...]
    """Population mean per weight."""
    std: tuple[float, ...]
    """Population standard deviation per weight."""
    games: int
    """Games played in this generation."""
    games_total: int
    """Games played in the whole run up to and including it."""
    matches: tuple[MatchSummary, ...] = ()
    """One summary per request of the strategy, in order."""
    stats: dict = dataclasses.field(default_factory=dict)
    """The strategy's statistics of the generation."""
    seconds: float = 0.0
    """Wall time of the generation."""
    seconds_total: float = 0.0
    """Wall time of the whole run up to it."""
    state: dict | None = None
    """The strategy state after it (lets a lost state.json be rebuilt exactly); None in runs
    stored before it was kept here."""
    gauntlet: GauntletTable | None = None
    """Runs with --opponents: every candidate's results against each opponent; None otherwise."""

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d.update(names=list(self.names), population=[list(r) for r in self.population],
                 mean=list(self.mean), std=list(self.std),
                 matches=[m.to_json() for m in self.matches],
                 gauntlet=None if self.gauntlet is None else self.gauntlet.to_json())
        for optional in ("state", "gauntlet"):
            if d[optional] is None:
                del d[optional]
        return d

    def as_state(self, *, finished: bool = False) -> State:
        """The state this generation commits (needs the strategy state stored with it)."""
        if self.state is None:
            raise StoreError(f"generation {self.generation} holds no strategy state")
        return State(generation=self.generation, games=self.games_total,
                     seconds=self.seconds_total, finished=finished, strategy=self.state)


def parse_generation(data, path: Path) -> Generation:
    """The one validator of a generation file."""
    d = json_object(data, path)
    names = d.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise damaged(path, "'names' must be a non-empty list of strings")
    n = len(names)
    pop = d.get("population")
    if not isinstance(pop, list) or not pop:
        raise damaged(path, "'population' must be a non-empty list of rows")
    population = tuple(vector_field(row, n, "population", path) for row in pop)
    strategy = d.get("strategy")
    if not isinstance(strategy, str):
        raise damaged(path, "'strategy' must be a string")
    matches, stats, state = d.get("matches", []), d.get("stats", {}), d.get("state")
    if not isinstance(matches, list):
        raise damaged(path, "'matches' must be a list of objects")
    if not isinstance(stats, dict):
        raise damaged(path, "'stats' must be an object")
    if state is not None and not isinstance(state, dict):
        raise damaged(path, "'state' must be an object")
    gauntlet = d.get("gauntlet")
    gen = Generation(
        generation=int_field(d, "generation", path), strategy=strategy, names=tuple(names),
        population=population, mean=vector_field(d.get("mean"), n, "mean", path),
        std=vector_field(d.get("std"), n, "std", path), games=int_field(d, "games", path),
        games_total=int_field(d, "games_total", path),
        matches=tuple(parse_match_summary(m, n, path) for m in matches), stats=stats,
        seconds=float_field(d, "seconds", path) if "seconds" in d else 0.0,
        seconds_total=float_field(d, "seconds_total", path) if "seconds_total" in d else 0.0,
        state=state, gauntlet=None if gauntlet is None else parse_gauntlet(gauntlet, n, path))
    if gen.games > gen.games_total:
        raise damaged(path, f"games {gen.games} > games_total {gen.games_total}")
    return gen


@dataclass(frozen=True)
class GameLine:
    """One line of games.jsonl: a game record (``GameRecord.to_dict()``) and where it is."""

    line: int
    """1-based line number in games.jsonl."""
    key: tuple[int, int, int, int]
    """(generation, fixture, pair, game index)."""
    data: dict
    """The record (``GameRecord.from_dict`` reads it)."""


_GAME_STR = ("white", "black", "result", "termination")
_GAME_LIST = ("white_weights", "black_weights", "moves")
_GAME_PER_MOVE = ("scores", "depths", "move_ms")
"""Optional per-move integer lists (records written before a list was kept lack it)."""


def parse_game_line(raw: bytes, line: int, path: Path) -> GameLine:
    """The one validator of a game log line."""
    where = f"{path} line {line}"
    try:
        d = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise damaged(Path(where), "not a JSON game record") from None
    if not isinstance(d, dict):
        raise damaged(Path(where), "not a JSON object")
    key = d.get("key")
    if not (isinstance(key, list) and len(key) == 4
            and all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in key)):
        raise damaged(Path(where), f"'key' must be 4 integers >= 0, not {key!r}")
    for k in _GAME_STR:
        if not isinstance(d.get(k), str):
            raise damaged(Path(where), f"'{k}' must be a string")
    for k in _GAME_LIST:
        if not isinstance(d.get(k), list):
            raise damaged(Path(where), f"'{k}' must be a list")
    if d["result"] not in RESULTS:
        raise damaged(Path(where), f"result {d['result']!r} is not one of {', '.join(RESULTS)}")
    for k in _GAME_PER_MOVE:
        v = d.get(k)
        if v is not None and not (isinstance(v, list) and len(v) == len(d["moves"]) and all(
                isinstance(x, int) and not isinstance(x, bool) for x in v)):
            raise damaged(Path(where), f"'{k}' must be one integer per move")
    if not isinstance(d.get("opening"), dict) or not isinstance(d["opening"].get("fen"), str):
        raise damaged(Path(where), "'opening' must be an object with a 'fen'")
    return GameLine(line=line, key=tuple(key), data=d)


@dataclass(frozen=True)
class ResumePoint:
    """What :meth:`Store.prepare_resume` found and did."""

    state: State | None
    """The state to continue from (None: nothing stored yet, start at generation 0)."""
    notes: tuple[str, ...]
    """One line per repair (shown to the user)."""


def check_verify(doc: dict, path: Path) -> dict:
    """The validator of verify.json (written by ``evotune verify``): the fields reports use."""
    def bad(what):
        return StoreError(f"{path} is damaged ({what}); run 'evotune verify' again to replace it")

    g = doc.get("generation")
    if g is not None and (isinstance(g, bool) or not isinstance(g, int) or g < 0):
        raise bad(f"'generation' must be an integer >= 0, not {g!r}")
    w = doc.get("weights", [])
    if not isinstance(w, list) or not all(isinstance(x, (int, float)) for x in w):
        raise bad("'weights' must be a list of numbers")
    matches = doc.get("matches", [])
    if not isinstance(matches, list) or not all(
            isinstance(m, dict) and all(isinstance(m.get(k), int) and not isinstance(m.get(k), bool)
                                        for k in ("games", "wins", "draws", "losses"))
            for m in matches):
        raise bad("'matches' must be a list of match objects with games, wins, draws, losses")
    return doc

