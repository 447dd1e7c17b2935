"""The tune page's web application (Flask): two pages (the runs, one run), their JSON and the
package's own assets. It only reads (:class:`evotune.serve.views.Reader`); every route is a
GET; nothing outside the runs folder and ``static/`` is served; with an access token set
(another address than the loopback), every request must carry it.
"""
from __future__ import annotations

import hmac
import json
import logging
from pathlib import Path

from flask import Flask, Response, abort, jsonify, request, send_from_directory

from ..errors import EvotuneError
from .matches import NotAMatch
from .views import Reader, Refused, damaged_file

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
"""The page's assets (shipped in the package: no CDN)."""
TOKEN_COOKIE = "evotune_token"
MAX_COLUMNS = 1000
"""At most this many weights' trajectories in one answer."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def create_app(runs_dir: str | Path, *, token: str = "", loopback: bool = True) -> Flask:
    """The application over ``runs_dir``; ``token``: the access token every request must carry
    (``?token=`` once, then a cookie; '' for none); ``loopback``: refuse requests whose Host is
    not a loopback name (a web page elsewhere cannot reach the server through DNS rebinding)."""
    app = Flask(__name__, static_folder=None)
    reader = Reader(runs_dir)
    app.config["EVOTUNE_READER"] = reader

    @app.before_request
    def _check_access():
        if loopback and _host_name(request.host or "") not in LOOPBACK_HOSTS:
            abort(403)
        if token:
            given = request.args.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
            if not hmac.compare_digest(given.encode(), token.encode()):
                abort(403)

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.update(SECURITY_HEADERS)
        if token and request.args.get("token") == token:
            resp.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict")
        if request.path.startswith("/api/"):
            resp.headers["Cache-Control"] = "no-cache"
        return resp

    @app.errorhandler(Refused)
    def _refused(exc: Refused):
        return jsonify(error=str(exc)), 404

    @app.errorhandler(NotAMatch)
    def _not_a_match(exc: NotAMatch):
        return jsonify(error=str(exc)), 404

    @app.errorhandler(EvotuneError)
    def _damaged(exc: EvotuneError):
        return jsonify(error=f"damaged: {damaged_file(exc, reader.root) or exc}"), 200

    def page(name: str) -> Response:
        return send_from_directory(STATIC, name, mimetype="text/html")

    @app.get("/")
    def runs_page():
        return page("runs.html")

    @app.get("/run/<run_id>")
    def run_page(run_id: str):
        reader.store(run_id)  # Refused: 404
        return page("run.html")

    @app.get("/match/<path:mid>")
    def match_page(mid: str):
        reader.matches.folder(mid)  # NotAMatch: 404
        return page("match.html")

    @app.get("/static/<name>")
    def asset(name: str):
        if "/" in name or "\\" in name or name.startswith(".") or not (STATIC / name).is_file():
            abort(404)
        return send_from_directory(STATIC, name)

    encoded: dict[int, tuple[object, bytes]] = {}  # a cached view's JSON, encoded once

    def encode(data) -> bytes:
        hit = encoded.get(id(data))
        if hit is not None and hit[0] is data:
            return hit[1]
        body = json.dumps(data, separators=(",", ":")).encode()
        if len(encoded) > 1000:
            encoded.clear()
        encoded[id(data)] = (data, body)
        return body

    def json_of(data, body: bytes | None = None) -> Response:
        resp = Response(encode(data) if body is None else body, mimetype="application/json")
        resp.add_etag()
        resp.make_conditional(request)  # 304 when the page has this already
        return resp

    @app.get("/api/runs")
    def api_runs():
        return json_of({"folder": str(reader.root), "runs": reader.runs(),
                        "matches": reader.match_rows()})

    @app.get("/api/run/<run_id>")
    def api_run(run_id: str):
        detail = encode(reader.detail(run_id))  # the series, encoded once per change
        row = json.dumps(reader.row(run_id), separators=(",", ":")).encode()
        return json_of(None, b'{"row":' + row + (b"," + detail[1:] if detail != b"{}" else b"}"))

    @app.get("/api/run/<run_id>/columns")
    def api_columns(run_id: str):
        try:
            index = [int(x) for x in request.args.get("w", "").split(",") if x][:MAX_COLUMNS]
        except ValueError:
            abort(400)
        return json_of(reader.columns(run_id, index))

    @app.get("/api/run/<run_id>/matches")
    def api_run_matches(run_id: str):
        return json_of({"matches": reader.match_rows(run_id)})

    @app.get("/api/match/<path:mid>")
    def api_match(mid: str):
        return json_of(reader.match(mid))

    @app.get("/api/run/<run_id>/strength")
    def api_strength(run_id: str):
        return json_of(reader.strength(run_id))

    @app.get("/api/run/<run_id>/pgn/<int:generation>")
    def api_pgn(run_id: str, generation: int):
        text = reader.pgn(run_id, generation)
        return Response(text, mimetype="application/x-chess-pgn", headers={
            "Content-Disposition": f'inline; filename="{run_id}-gen-{generation:04d}.pgn"'})

    return app


def _host_name(host: str) -> str:
    """The name of a Host header without its port ('[::1]:8765' -> '[::1]')."""
    if host.startswith("["):
        return host[:host.find("]") + 1]
    return host.split(":", 1)[0]
