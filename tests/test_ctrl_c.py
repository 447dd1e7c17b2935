"""Ctrl-C of a command with workers (issue 37, item 5): one line that is not an error, with the
resume hint, exit 130, and no KeyboardInterrupt traceback from the worker processes (they start
with SIGINT blocked; the command stops them)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _ctrl_c_at_generation(args: list[str], state: Path, generation: int = 1
                          ) -> subprocess.CompletedProcess:
    """Start ``evotune ARGS`` in a process group of its own (SIGINT not ignored, as on a
    terminal) and press Ctrl-C (SIGINT to the whole group) once its run stored ``generation``."""
    proc = subprocess.Popen([sys.executable, "-m", "evotune.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, process_group=0, env=ENV,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 180
    while time.time() < deadline and proc.poll() is None:
        try:
            if json.loads(state.read_text())["generation"] >= generation:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    time.sleep(0.5)  # the next generation's games under way in the workers
    assert proc.poll() is None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_of_a_run_with_workers_is_one_line_exit_130(tmp_path):
    runs = tmp_path / "runs"
    r = _ctrl_c_at_generation(["run", "--np", "4", "--games", "2", "--depth", "2",
                               "--generations", "50", "--workers", "2", "--runs-dir", str(runs),
                               "--run-id", "c"], runs / "c" / "state.json")
    assert r.returncode == 130, r.stderr
    assert "Traceback" not in r.stderr and "KeyboardInterrupt" not in r.stderr, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last == ("evotune: interrupted; every finished generation is stored: continue with "
                    "'evotune resume c'"), r.stderr
    assert "error" not in r.stderr
    state = json.loads((runs / "c" / "state.json").read_text())
    assert state["generation"] >= 1 and not state["finished"]


def test_ctrl_c_while_processes_start_is_kept_for_the_command_and_hidden_from_them():
    """Inside children_ignore_ctrl_c a Ctrl-C is not lost: the command gets it when the block
    ends, or at once when another thread of the process (a pool's) takes the signal (SIGINT
    ignored there lost it, and a run went on to its end); a process started inside the block
    has SIGINT blocked for good, so it never prints a traceback."""
    import pytest

    from evotune.reaper import children_ignore_ctrl_c

    child = None
    # as in a command: Python's handler, SIGINT not blocked (an earlier test may leave either)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        with pytest.raises(KeyboardInterrupt):
            with children_ignore_ctrl_c():
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert child is not None
    try:
        status = Path(f"/proc/{child.pid}/status").read_text()
        blocked = int(next(ln for ln in status.splitlines() if ln.startswith("SigBlk:")).split()[1], 16)
        assert blocked & (1 << (signal.SIGINT - 1))
    finally:
        child.kill()
        child.wait()


def test_ctrl_c_taken_by_another_thread_is_raised_when_the_block_ends_not_inside():
    """A Ctrl-C that a thread started before the block takes (one that does not block SIGINT,
    as a pool's may) waits for the block's end: inside it a pool registers its temporary folder
    and then the hook that removes it, and an interrupt between the two left loky's "leaked
    folder objects" warning after the command's line. It is raised once, by the command's
    handler, when the block ends."""
    import threading

    import pytest

    from evotune.reaper import children_ignore_ctrl_c

    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    done = threading.Event()
    other = threading.Thread(target=done.wait, args=(30,))  # SIGINT not blocked in it
    other.start()
    reached = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with children_ignore_ctrl_c():
                os.kill(os.getpid(), signal.SIGINT)  # only `other` can take it
                for _ in range(20):
                    time.sleep(0.01)  # the handler runs in the main thread here
                reached.append(True)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    finally:
        done.set()
        other.join()
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert reached == [True]
    time.sleep(0.05)  # raised once: no second KeyboardInterrupt here


def test_a_pool_threads_exception_is_quiet_once_the_pool_is_stopped_early():
    """After quiet_pool_threads (a pool stopped by Ctrl-C or an error) a traceback of loky's
    manager or feeder thread is not printed beside the command's line; any other thread's is
    (handed to the hook that was there before)."""
    import threading

    from evotune.reaper import quiet_pool_threads

    def fail():
        raise KeyError(37)

    printed = []
    before = threading.excepthook
    threading.excepthook = lambda args: printed.append((args.thread.name, args.exc_value))
    try:
        quiet_pool_threads()
        quiet_pool_threads()  # twice: one hook
        for name in ("ExecutorManagerThread", "QueueFeederThread", "mine"):
            t = threading.Thread(target=fail, name=name)
            t.start()
            t.join()
    finally:
        threading.excepthook = before
    assert [(name, repr(exc)) for name, exc in printed] == [("mine", "KeyError(37)")]
