"""Nothing a command starts outlives it, even when the command is killed with SIGKILL.

:func:`no_orphans` starts a small watchdog process (Linux: it reads /proc) that keeps a list of
the command's descendants - worker processes, joblib/loky's resource tracker, the PGN writer,
external engines - and, once the command is gone, kills those still running. A descendant that
has exited is never confused with a new process of the same PID (start times are compared).
Processes started too shortly before the kill to be seen are found by the token the command puts
in its environment, which every process it starts inherits.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

_WATCHDOG = r"""
import os, signal, sys, time
pid, me, token = int(sys.argv[1]), os.getpid(), sys.argv[2].encode()

def table():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        rest = data[data.rindex(b")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append((int(d), rest[19]))
    return kids

def descendants(roots):
    kids, out, todo = table(), {}, list(roots)
    while todo:
        for child, start in kids.get(todo.pop(), []):
            if child != me and child not in out:
                out[child] = start
                todo.append(child)
    return out

def start_time(p):
    try:
        with open(f"/proc/{p}/stat", "rb") as fh:
            data = fh.read()
        return data[data.rindex(b")") + 2:].split()[19]
    except (OSError, ValueError, IndexError):
        return None

known = {}
while os.getppid() == pid:
    known = {p: s for p, s in {**known, **descendants([pid])}.items() if start_time(p) == s}
    time.sleep(0.2)
def marked():
    # processes that inherited the command's token: also those started after the last poll,
    # which were re-parented when the command died and so are no longer its descendants
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != me:
            try:
                with open(f"/proc/{d}/environ", "rb") as fh:
                    env = fh.read().split(b"\0")
            except OSError:
                continue
            if b"EVOTUNE_REAPER_TOKEN=" + token in env:
                s = start_time(int(d))
                if s is not None:
                    out[int(d)] = s
    return out

for _ in range(3):  # children of the killed ones too, also those started meanwhile
    known.update(descendants(list(known)))
    known.update(marked())
    for p, s in list(known.items()):
        if start_time(p) == s:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.1)
"""

_started: list[subprocess.Popen] = []


def no_orphans() -> None:
    """Start the watchdog of this process (once; a no-op where /proc is unavailable)."""
    if _started or not os.path.isdir("/proc/self"):
        return
    token = f"{os.getpid()}-{time.time_ns()}"
    os.environ["EVOTUNE_REAPER_TOKEN"] = token  # inherited by every process started from now on
    _started.append(subprocess.Popen(
        [sys.executable, "-c", _WATCHDOG, str(os.getpid()), token], stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))


def worker_ignores_ctrl_c(command_pid: int) -> None:
    """In a pool's worker (a process other than ``command_pid``'s, in its main thread): ignore
    SIGINT from now on. :func:`children_ignore_ctrl_c` keeps it from workers started inside its
    block; a worker the pool starts later (loky replaces a worker that stopped, from its own
    thread) would take a terminal's Ctrl-C with Python's handler and print a KeyboardInterrupt
    traceback beside the command's one line (seen under load in tests/test_ctrl_c.py). The
    command stops its pools itself."""
    if os.getpid() != command_pid and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def children_ignore_ctrl_c():
    """SIGINT blocked while processes start inside the block, so that they never see it (the
    signal mask outlives fork and exec; a Python handler does not). Ctrl-C on a terminal signals
    the whole process group, and only the command should see it: it stops its pools, whose
    workers would otherwise each print a KeyboardInterrupt traceback. The command's own Ctrl-C
    that arrives inside the block is not lost (as it was when SIGINT was ignored here): it is
    raised when the block ends, also when another thread of the process (a pool's) takes the
    signal. It is never raised inside the block: there a pool registers its temporary folder
    with loky's resource tracker and then the hook that removes it at exit, and an interrupt
    between the two left a "leaked folder objects" warning after the command's one line (seen
    under load in tests/test_ctrl_c.py). Outside the main thread, a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken: list[int] = []
    handler = signal.signal(signal.SIGINT, lambda signum, frame: taken.append(signum))
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if handler is None else handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a pending Ctrl-C is raised here
        if taken:  # one another thread took: raised now, by the command's own handler
            signal.raise_signal(signal.SIGINT)


_POOL_THREADS = ("ExecutorManagerThread", "QueueFeederThread")


def quiet_pool_threads() -> None:
    """From now on, an exception in a loky pool's own threads is not printed. Called when a
    command stops a pool early (Ctrl-C, an error) and is about to exit: aborting the pool's
    tasks races with its manager thread, which can fail on a task the abort just dropped
    (``KeyError`` in ``add_call_item_to_queue``, seen under load in tests/test_ctrl_c.py) and
    print a traceback before the command's one line. Other threads' exceptions still print."""
    default = threading.excepthook
    if getattr(default, "_evotune_quiet", False):
        return

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.thread is None or args.thread.name not in _POOL_THREADS:
            default(args)

    hook._evotune_quiet = True  # type: ignore[attr-defined]
    threading.excepthook = hook
