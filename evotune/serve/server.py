"""The tune page's HTTP server: werkzeug's threaded WSGI server around the application, in the
foreground (``evotune serve``) or in a thread (tests and benchmarks)."""
from __future__ import annotations

import socket
import threading
from pathlib import Path

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from ..errors import ConfigError, EvotuneError
from .app import create_app


class QuietHandler(WSGIRequestHandler):
    """No line per request (a page polls every 2 s); errors are still logged."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        return


def free_to_listen(host: str, port: int) -> None:
    """OSError when ``host:port`` cannot be bound (in use, an address not of this machine);
    port 0 is always free."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as werkzeug binds
        probe.bind((host, port))
        probe.listen(1)


class PageServer:
    """The page of ``runs_dir`` served at ``host:port`` (port 0: any free one)."""

    def __init__(self, runs_dir: str | Path, *, host: str = "127.0.0.1", port: int = 0,
                 token: str = "", loopback: bool = True) -> None:
        self.app = create_app(runs_dir, token=token, loopback=loopback)
        try:
            free_to_listen(host, port)  # werkzeug prints its own lines and exits on a used port
            self.server: BaseWSGIServer = make_server(host, port, self.app, threaded=True,
                                                       request_handler=QuietHandler)
        except OSError as exc:
            raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose "
                              "another --port") from None
        self.host = host
        self.token = token
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address ('http://127.0.0.1:8765/')."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.server.server_port}/"

    def warm(self) -> threading.Thread:
        """Read every run's row and page once, in a background thread, so the first look is
        served from the cache (the page reads only what changed afterwards)."""
        reader = self.app.config["EVOTUNE_READER"]

        def read() -> None:
            for store in reader.stores():
                try:
                    reader.row(store.run_id)
                    reader.run(store.run_id)
                except EvotuneError:
                    continue  # a run that went away or was refused: its page says so

        thread = threading.Thread(target=read, daemon=True, name="evotune-serve-warm")
        thread.start()
        return thread

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def __enter__(self) -> PageServer:
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self.server.server_close()
