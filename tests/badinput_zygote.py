"""A process that imports evotune's command line once and then runs each case the tables send it
in a forked child of its own: the child changes to the case's folder, gets /dev/null as standard
input and files as standard output and error, and exits with the command's code, exactly as
``python -m evotune.cli ARGS`` would, without paying the interpreter's and numba's start-up for
every case (tests/badinput.py drives it; one request and one answer per line, JSON)."""
from __future__ import annotations

import atexit
import importlib
import json
import os
import signal
import sys
import time

import evotune.engine.api  # noqa: F401  (all a command needs is imported before the first fork)
from evotune.cli import COMMAND_GROUPS, main

for _group in COMMAND_GROUPS:  # the commands' modules, which the command line imports lazily
    importlib.import_module(f"evotune.cli.{_group}")


def _child(req: dict) -> None:
    os.setpgid(0, 0)
    os.chdir(req["cwd"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, req["out"]), (2, req["err"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(f, fd)
        os.close(f)
    sys.stdin = open(os.devnull)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    code = 0
    try:
        main(req["args"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # as the interpreter would: a traceback on stderr, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve() -> None:
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(req)
        deadline = time.monotonic() + req["timeout"]
        code: int | str
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                code = "hang"
                break
            time.sleep(0.005)
        print(json.dumps({"code": code}), flush=True)


if __name__ == "__main__":
    serve()
