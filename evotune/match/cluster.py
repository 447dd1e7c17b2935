"""Where a run's games are played: a context manager the run loop enters once per run.

``backend_session('local', ...)`` sets nothing up: :func:`~evotune.match.runner.map_games`
starts joblib's loky processes itself. ``backend_session('dask', 'tcp://HOST:8786')``

- connects a ``distributed.Client`` to the scheduler within a bounded time (an unreachable or
  malformed address is a :class:`~evotune.errors.ClusterError` saying how to start a scheduler);
- waits (bounded) until the scheduler has at least one worker;
- registers ``WarmUpPlugin``, a worker plugin that loads the engine core (numba cache) in
  every worker: in those present now (``register_plugin`` runs its ``setup`` on each and waits)
  and in any worker that joins later (a joining worker runs its plugins' ``setup`` before it
  handles its first task), so no game pays for compilation and the first task's duration does
  not mislead the scheduler. The warm-up runs in a thread, keeping the worker's event loop
  (heartbeats) responsive while a worker without a cache compiles;
- yields a :class:`BackendSession`; map_games then runs through joblib's 'dask' backend, which
  uses this client (the default client), and the client is closed at the end.

Robustness. A game task is a pure function of its arguments. When a worker dies in the middle of
a generation, the scheduler reschedules the tasks it held on the other workers (no ``retries``
needed: retries only repeat tasks that *raised*, and ``play_task`` raising is deterministic);
map_games collects records by task position, so no game is lost or counted twice, and the
results equal a local run's. A task whose workers die ``distributed.scheduler.allowed-failures``
times (default 3) is given up (``KilledWorker``): that becomes a ClusterError, and the stored
run resumes from its last generation with ``evotune resume RUN``.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ClusterError, ConfigError
from . import runner

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0
"""Seconds allowed to reach the scheduler."""
WORKERS_TIMEOUT = 60.0
"""Seconds allowed for the scheduler to have at least one worker."""

_START_HINT = ("start one with 'dask scheduler' (port 8786) on that machine and workers with "
               "'dask worker tcp://HOST:8786 --nworkers N --nthreads 1', or fix --scheduler / "
               "the config file's [cluster] table")


@dataclass(frozen=True)
class BackendSession:
    """Where the games of a run are played while the session is open."""

    backend: str
    """The joblib backend name for map_games: 'loky' (local processes) or 'dask'."""
    workers: int
    """Parallel slots: local worker processes, or the cluster's worker threads at connect time."""
    scheduler: str = ""
    """The Dask scheduler address ('' for local)."""
    client: Any = field(default=None, compare=False, repr=False)
    """The connected ``distributed.Client`` (None for local)."""


def worker_warm() -> bool:
    """True when the engine core was warmed up in this process (used on workers)."""
    return bool(runner._WARM)


def _warm_up() -> None:
    runner.warm_up()


def _make_warm_up_plugin() -> type:
    from distributed.diagnostics.plugin import WorkerPlugin

    class WarmUpPlugin(WorkerPlugin):
        """Worker plugin: load (or compile) the engine core in a worker before its first task."""

        name = "evotune-warm-up"
        idempotent = True

        async def setup(self, worker) -> None:
            await asyncio.get_running_loop().run_in_executor(None, _warm_up)

    WarmUpPlugin.__module__ = __name__
    WarmUpPlugin.__qualname__ = "WarmUpPlugin"
    return WarmUpPlugin


def __getattr__(name: str):
    # WarmUpPlugin is built on first use: importing this module (every run does) must not
    # import dask.distributed, an optional extra that is slow to import. Pickle finds the
    # class by name here, on workers too.
    if name == "WarmUpPlugin":
        cls = globals()["WarmUpPlugin"] = _make_warm_up_plugin()
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _with_deadline(fn, seconds: float):
    """Run ``fn()`` in a daemon thread; (True, value) if it returned in time, else (False, None).

    Exceptions raised by ``fn`` are re-raised. A DNS lookup that hangs can outlive the client's
    own connect timeout; this keeps the connection attempt bounded whatever happens.
    """
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    t = threading.Thread(target=target, name="evotune-dask-connect", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        return False, None
    if "error" in box:
        raise box["error"]
    return True, box["value"]


def connect(address: str, *, timeout: float | None = None):
    """A ``distributed.Client`` connected to ``address`` within ``timeout`` s, or ClusterError.

    ``timeout`` None means :data:`CONNECT_TIMEOUT`.
    """
    timeout = CONNECT_TIMEOUT if timeout is None else float(timeout)
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError("backend 'dask' needs dask.distributed: pip install -e .[dask]") \
            from None
    if not address:
        raise ConfigError("backend 'dask' needs --scheduler tcp://HOST:PORT")
    _check_address(address)
    fail = f"cannot reach the Dask scheduler at {address} within {timeout:g} s; {_START_HINT}"
    try:
        ok, client = _with_deadline(lambda: Client(address, timeout=timeout), timeout + 5.0)
    except (OSError, TimeoutError):
        raise ClusterError(fail) from None
    except (ValueError, TypeError) as exc:
        raise ClusterError(f"Dask scheduler address {address!r} is not valid ({exc}); give "
                           "tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786") from None
    if not ok:
        raise ClusterError(fail)
    return client


def _check_address(address: str) -> None:
    """A TCP address without a port (or with a bad one) is refused before any Client is made
    (a Client that fails on it leaves an event loop registered in distributed's globals)."""
    from distributed.comm import parse_address, parse_host_port
    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except ValueError as exc:
        raise ClusterError(f"Dask scheduler address {address!r} is not valid ({exc}); give "
                           "tcp://HOST:PORT, e.g. tcp://10.0.0.5:8786") from None


def _wait_for_workers(client, address: str, timeout: float) -> None:
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, OSError):
        raise ClusterError(f"the Dask scheduler at {address} has no worker after {timeout:g} s; "
                           f"start workers with 'dask worker {address} --nworkers N "
                           "--nthreads 1' on machines where evotune is installed") from None


def _register_warm_up(client, address: str) -> None:
    try:
        plugin = __getattr__("WarmUpPlugin")()
        client.register_plugin(plugin, name=plugin.name)
    except Exception as exc:  # noqa: BLE001 - any worker-side failure, e.g. evotune missing
        raise ClusterError(f"a worker of {address} could not load evotune's engine "
                           f"({type(exc).__name__}: {exc}); install evotune "
                           "(pip install -e .[dask]) on every worker machine") from None


@contextlib.contextmanager
def backend_session(backend: str, scheduler: str = "", *, workers: int = 1,
                    timeout: float | None = None,
                    workers_timeout: float | None = None) -> Iterator[BackendSession]:
    """Open where games run ('local' or 'dask'); enter once per run, around its generations.

    ``workers`` is the local process count ('local'; ignored by 'dask', whose parallelism is
    the cluster's). ``timeout`` bounds the connection (None: :data:`CONNECT_TIMEOUT`),
    ``workers_timeout`` the wait for a first worker (None: :data:`WORKERS_TIMEOUT`). For 'dask'
    the client is closed on exit, whatever happened.
    """
    if backend in ("local", "loky"):
        yield BackendSession(backend="loky", workers=max(1, int(workers)))
        return
    if backend != "dask":
        raise ConfigError(f"unknown backend '{backend}'; use 'local' or 'dask'")
    client = connect(scheduler, timeout=timeout)
    try:
        from distributed import KilledWorker

        _wait_for_workers(client, scheduler,
                          WORKERS_TIMEOUT if workers_timeout is None else workers_timeout)
        _register_warm_up(client, scheduler)
        threads = sum(client.nthreads().values())
        log.info("dask: %s with %d worker threads", scheduler, threads)
        # >= 2 so that map_games never falls back to playing in this process
        session = BackendSession(backend="dask", workers=max(2, threads), scheduler=scheduler,
                                 client=client)
        try:
            yield session
        except KilledWorker as exc:
            raise ClusterError(f"the Dask cluster at {scheduler} gave up a game after its "
                               f"workers died repeatedly ({exc}); check the workers' memory "
                               "and logs, then continue with 'evotune resume RUN'") from None
    finally:
        client.close()
