"""The tune page: ``evotune serve`` (:mod:`evotune.serve`), a read-only web page of every run
of a runs folder, on the loopback unless told otherwise."""
from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path

import click

from ..errors import ConfigError
from .options import runs_dir_option

MISSING = "evotune serve needs the serve extra: pip install -e .[serve]"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command("serve")
@runs_dir_option()
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="TCP port (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Another than the loopback (127.0.0.1, ::1) makes the "
                   "page reachable from other machines: it then needs --allow-remote and every "
                   "request must carry the access token printed at start.")
@click.option("--allow-remote", is_flag=True,
              help="Listen on a non-loopback --host, with an access token.")
def serve(runs_dir, port, host, allow_remote):
    """Serve a live, read-only web page of the runs under --runs-dir (Ctrl-C stops it)."""
    try:
        from ..serve.server import PageServer  # noqa: PLC0415 (an optional extra: flask)
    except ImportError:
        raise ConfigError(MISSING) from None
    folder = Path(runs_dir)
    if not folder.is_dir():
        raise ConfigError(f"--runs-dir {runs_dir}: no such folder")
    remote = not _loopback(host)
    if remote and not allow_remote:
        raise ConfigError(f"--host {host} is not the loopback: the page would be reachable from "
                          "other machines; add --allow-remote (it then needs the printed access "
                          "token) or open it through an SSH tunnel (docs/usage/runs.md)")
    token = secrets.token_urlsafe(24) if remote else ""
    server = PageServer(folder, host=host, port=port, token=token, loopback=not remote)
    try:
        os.nice(10)  # the page yields the processors to the runs it shows
    except OSError:
        pass
    url = server.url
    click.echo(f"serving {folder.resolve()} at {url}" + (f"?token={token}" if token else ""))
    if token:
        click.echo(f"access token: {token} (every request must carry it; keep it private)")
    click.echo("read only; Ctrl-C stops it")
    server.warm()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        server.close()


COMMANDS = (serve,)
