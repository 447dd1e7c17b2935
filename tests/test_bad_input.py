"""Every bad input, on every command and every input file type: exit 2, exactly one line on
stderr, no traceback, and nothing created or changed (the machinery and the input files are in
tests/badinput.py; the tables of the match and learning commands use them too).
"""
from __future__ import annotations

import pytest
from badinput import FEN, RUN, assert_refused, play, prepare_run_case

# (id, command args, expected substring or None). '@RUN' = the damaged-run folder name.
CASES: list[tuple[str, list[str]]] = []


def case(name: str, *args: str) -> None:
    CASES.append((name, list(args)))


# ---- perft -----------------------------------------------------------------------------------
case("perft depth 10000", "perft", FEN, "10000")
case("perft depth 65", "perft", FEN, "65")
case("perft depth -1", "perft", FEN, "-1")
case("perft depth 0", "perft", FEN, "0")
case("perft depth float", "perft", FEN, "1e3")
case("perft divide depth 0", "perft", "--divide", FEN, "0")
case("perft bad fen", "perft", "not a fen", "2")
case("perft illegal position", "perft", "8/8/8/8/8/8/8/8 w - - 0 1", "1")
case("perft no depth", "perft", FEN)
for f in ("perft_empty.epd", "perft_comments.epd", "perft_nonutf8.epd", "perft_binary.epd",
          "perft_badentry.epd", "perft_deep.epd", "perft_badfen.epd", "perft_nocount.epd",
          "missing.epd", "adir"):
    case(f"perft suite {f}", "perft", "--suite", f)
case("perft suite max-nodes -1", "perft", "--suite", "perft_empty.epd", "--max-nodes", "-1")

# ---- search ----------------------------------------------------------------------------------
for w in ("100,300,330,500,-2e6,10", "100,300,330,500,nan,10", "100,300,330,500,inf,10",
          "100,300", "a,b,c,d,e,f", "100,300,330,500,900,10,5", "1e400,300,330,500,900,10", ""):
    case(f"search weights {w!r}", "search", FEN, "--weights", w)
for flag, v in (("--depth", "65"), ("--depth", "0"), ("--depth", "-3"), ("--nodes", "-1"),
                ("--nodes", "1e23"), ("--nodes", "100000000000000000000000")):
    case(f"search {flag} {v}", "search", FEN, flag, v)
case("search bad fen", "search", "xyz")
case("search no kings", "search", "8/8/8/8/8/8/8/8 w - - 0 1")

# ---- match -----------------------------------------------------------------------------------
M = ["match", "shannon", "shannon", "--games", "2", "--depth", "1"]
for flag, v in (("--games", "3"), ("--games", "0"), ("--games", "-2"), ("--seed", "-1"),
                ("--depth", "0"), ("--depth", "65"), ("--nodes", "-1"),
                ("--nodes", "100000000000000000000000"), ("--max-plies", "99999999999"),
                ("--max-plies", "0"), ("--workers", "-1"), ("--workers", "100000"),
                ("--book-plies", "-1"), ("--movetime", "nan"), ("--movetime", "-1")):
    case(f"match {flag} {v}", *M, flag, v)
case("match resign 0", *M, "--resign", "0", "3")
case("match draw negative", *M, "--draw", "-1", "3", "0")
case("match sprt nan", *M, "--sprt", "nan", "5")
case("match sprt inverted", *M, "--sprt", "10", "0")
for f in ("op_random.pgn", "op_random.epd", "op_text.pgn", "op_empty.epd", "op_comments.epd",
          "op_badfen.epd", "op_nonutf8.pgn", "op_random.bin", "op_odd.bin", "op_empty.bin",
          "op_sorted_garbage.bin", "op_illegal.bin", "op_random.zip", "missing.epd", "adir",
          "noext"):
    case(f"match openings {f}", *M, "--openings", f)
case("match pgn on read-only path", *M, "--pgn", "@RO/games.pgn")
case("match pgn is a folder", *M, "--pgn", "adir")
case("match pgn below a file", *M, "--pgn", "afile/games.pgn")
for f in ("w_list.json", "w_nested.json", "w_nan.json", "w_inf.json", "w_huge.json",
          "w_str.json", "w_bool.json", "w_badjson.json", "w_nonutf8.json", "w_binary.json",
          "w_dict_unknown.json", "w_dict_str.json", "w_dict_nested.json", "w_number.json",
          "w_deep.json", "w_name_nl.json", "missing.json"):
    case(f"match player {f}", "match", f, "shannon", "--games", "2", "--depth", "1")
for f in ("spec_nonutf8.toml", "spec_binary.toml", "spec_badtoml.toml", "spec_ref_str.toml",
          "spec_lower_str.toml", "spec_upper_list.toml", "spec_fixed_str.toml",
          "spec_scale_str.toml", "spec_scale_zero.toml", "spec_kind_int.toml",
          "spec_kind_bad.toml", "spec_name_nl.toml", "spec_specname_nl.toml",
          "spec_name_int.toml", "spec_option_nl.toml", "spec_weight_str.toml",
          "spec_noweights.toml", "spec_dupnames.toml", "spec_ref_nan.toml", "spec_ref_huge.toml",
          "spec_seven.toml", "spec_uci_nocmd.toml", "spec_uci_cmd_int.toml",
          "spec_uci_missing.toml", "spec_options_int.toml", "spec_option_name_nl.toml"):
    case(f"match player {f}", "match", f, "shannon", "--games", "2", "--depth", "1")
case("match unknown player", "match", "nobody", "shannon")

# ---- uci -------------------------------------------------------------------------------------
for f in ("w_list.json", "w_nested.json", "w_nan.json", "w_huge.json", "w_nonutf8.json",
          "w_binary.json", "w_deep.json", "missing.json", "adir"):
    case(f"uci weights {f}", "uci", "--weights", f)

# ---- run ---------------------------------------------------------------------------------------
R = ["run", *RUN, "--runs-dir", "pop"]
for flag, v in (("--depth", "65"), ("--depth", "0"), ("--nodes", "-1"),
                ("--nodes", "100000000000000000000000"), ("--np", "1e11"),
                ("--np", "100000000000"), ("--np", "3"), ("--games", "3"), ("--games", "0"),
                ("--seed", "-1"), ("--seed", str(2**64)), ("--workers", "-1"),
                ("--workers", "100000"), ("--generations", "-1"), ("--max-seconds", "nan"),
                ("--max-seconds", "inf"), ("--max-seconds", "-1"), ("--max-games", "-1"),
                ("--strategy", "cmaes-x"), ("--engine", "nosuchengine"),
                ("--openings", "missing.epd"), ("--param", "np=6"), ("--param", "games=4"),
                ("--param", "F"), ("--param", "Fx=0.3"), ("--param", "F=abc"),
                ("--run-id", "a/b"), ("--run-id", "a\nb"), ("--run-id", "../x"),
                ("--run-id", ".hidden"), ("--run-id", "x" * 101), ("--run-id", "t\x1b[31m"),
                ("--backend", "dask"), ("--runs-dir", "@RO/pop"), ("--runs-dir", "afile"),
                ("--runs-dir", "@RUN")):
    case(f"run {flag} {v!r}", *R, flag, v)
case("run dask unreachable", *R, "--backend", "dask", "--scheduler", "tcp://127.0.0.1:9")
case("run batch not spsa", *R, "--strategy", "de", "--batch", "8")
case("run batch 0", *R, "--strategy", "spsa", "--batch", "0")
case("run batch vs param", *R, "--strategy", "spsa", "--batch", "4", "--param", "batch=8")
# issue 38 item 8: a MemoryError allocating 36 TiB (internal error) before
case("run batch 1e12", *R, "--strategy", "spsa", "--batch", "1000000000000")
case("run param batch 1e12", *R, "--strategy", "spsa", "--param", "batch=1000000000000")
case("run batch 10001", *R, "--strategy", "spsa", "--batch", "10001")
for f in ("nonutf8.toml", "binary.toml", "badtoml.toml", "unknownkey.toml", "np_str.toml",
          "np_bool.toml", "np_inf.toml", "np_huge.toml", "depth_float.toml", "strategy_int.toml",
          "init_nan.toml", "init_inf.toml", "init_neg.toml", "init_inverted.toml",
          "maxplies.toml", "gen0.toml", "maxsec_nan.toml", "maxsec_inf.toml", "params_list.toml",
          "params_np.toml", "cluster_bad.toml", "nodes_huge.toml", "seed_neg.toml",
          "workers_neg.toml", "engine_list.toml", "missing.toml", "adir"):
    case(f"run config {f}", "run", "--config", f, "--runs-dir", "pop")
for f in ("spec_nonutf8.toml", "spec_ref_str.toml", "spec_fixed_str.toml", "spec_kind_int.toml",
          "spec_name_nl.toml", "spec_specname_nl.toml", "spec_option_nl.toml",
          "spec_seven.toml", "spec_ref_huge.toml", "spec_dupnames.toml", "spec_uci_missing.toml",
          "spec_option_name_nl.toml"):
    case(f"run engine {f}", *R, "--engine", f)
for f in ("op_random.pgn", "op_random.epd", "op_random.bin", "op_sorted_garbage.bin",
          "op_illegal.bin", "op_empty.epd", "op_nonutf8.pgn"):
    case(f"run openings {f}", *R, "--openings", f)
case("run existing id", *R, "--runs-dir", ".", "--run-id", "@RUN")

# ---- resume, status, runs, plot, report, export, verify on damaged or unknown runs ----------------
DAMAGES = ("state_gen_x", "state_games_neg", "state_gen_99", "state_list", "state_missing_old",
           "log_dup", "log_empty", "log_truncated", "log_nonutf8", "log_nokey", "gen_deleted",
           "gen_truncated", "gen_stray", "gens_file", "manifest_list", "manifest_noconfig",
           "manifest_nonutf8")
for d in DAMAGES:
    case(f"resume damaged {d}", "resume", f"@RUN:{d}", "--runs-dir", ".", "--generations", "2")
for d in ("state_gen_x", "state_list", "gen_stray", "gens_file", "manifest_list",
          "manifest_noconfig"):
    case(f"status damaged {d}", "status", f"@RUN:{d}", "--runs-dir", ".")
    case(f"report damaged {d}", "report", f"@RUN:{d}", "--runs-dir", ".", "--reports", "rep")
for d in ("state_gen_x", "gen_truncated", "manifest_list"):
    case(f"plot damaged {d}", "plot", f"@RUN:{d}", "--runs-dir", ".", "--reports", "rep")
    case(f"export damaged {d}", "export", f"@RUN:{d}", "--format", "json", "--runs-dir", ".")
case("report verify.json a list", "report", "@RUN:verify_list", "--runs-dir", ".", "--reports", "rep")
case("resume unknown", "resume", "nosuch", "--runs-dir", ".")
case("resume id with newline", "resume", "a\nb", "--runs-dir", ".")
case("resume workers -1", "resume", "@RUN", "--runs-dir", ".", "--workers", "-1")
case("resume generations -1", "resume", "@RUN", "--runs-dir", ".", "--generations", "-1")
case("status unknown", "status", "nosuch", "--runs-dir", ".")
case("plot unknown", "plot", "nosuch", "--runs-dir", ".", "--reports", "rep")
case("plot bad axis", "plot", "@RUN", "--runs-dir", ".", "--x", "elo", "--reports", "rep")
case("report bad rule", "report", "@RUN", "--runs-dir", ".", "--recommend", "best", "--reports",
     "rep")
case("report out read-only", "report", "@RUN", "--runs-dir", ".", "--reports", "@RO/rep")
case("export bad format", "export", "@RUN", "--format", "yaml", "--runs-dir", ".")
case("export engine missing", "export", "@RUN", "--format", "uci", "--engine", "nosuch",
     "--runs-dir", ".")
case("export engine nonutf8", "export", "@RUN", "--format", "uci", "--engine",
     "spec_nonutf8.toml", "--runs-dir", ".")
case("export engine option newline", "export", "@RUN", "--format", "uci", "--engine",
     "spec_option_nl.toml", "--runs-dir", ".")
case("export out read-only", "export", "@RUN", "--format", "json", "--out", "@RO/w.json",
     "--runs-dir", ".")
case("export out a folder", "export", "@RUN", "--format", "json", "--out", "adir",
     "--runs-dir", ".")
case("export bad rule", "export", "@RUN", "--format", "json", "--recommend", "x",
     "--runs-dir", ".")
V = ["verify", "@RUN", "--runs-dir", ".", "--games", "2"]
for flag, v in (("--games", "3"), ("--workers", "-1"), ("--workers", "100000"), ("--seed", "-1"),
                ("--depth", "0"), ("--depth", "65"), ("--recommend", "x"),
                ("--backend", "dask"), ("--sprt", "nan", )):
    case(f"verify {flag} {v}", *V, flag, v, *(["1"] if flag == "--sprt" else []))
case("verify unknown", "verify", "nosuch", "--runs-dir", ".")

# ---- experiments -------------------------------------------------------------------------------
for flag, v in (("--first-seed", "-1"), ("--seeds", "0"), ("--seeds", "-1"),
                ("--workers", "-1")):
    case(f"reproduce {flag} {v}", "reproduce", "de-paper", flag, v, "--runs-dir", "pop",
         "--reports", "rep")
C = ["compare", "--max-games", "10", "--runs-dir", "pop"]
for flag, v in (("--verify-games", "3"), ("--verify-games", "0"), ("--max-games", "0"),
                ("--strategies", "x"), ("--np", "3"), ("--depth", "0"), ("--seeds", "-1"),
                ("--workers", "-1")):
    case(f"compare {flag} {v}", *C, flag, v)


# ---- the machinery -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, stored_run, read_only) -> dict:
    """Every case run once, several at a time (they are independent subprocesses)."""
    return play(CASES, lambda d, args: prepare_run_case(d, args, stored_run, read_only),
                tmp_path_factory.mktemp("cases"), workers=6)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(name, outcomes):
    if outcomes[name] is None:
        pytest.skip("no read-only folder can be made here (mount failed and running as root)")
    assert_refused(outcomes[name])


def test_the_table_is_large_enough():
    assert len(CASES) >= 150
    commands = {args[0] for _, args in CASES}
    assert commands >= {"perft", "search", "match", "uci", "run", "resume", "status", "plot",
                        "report", "export", "verify", "reproduce", "compare"}
