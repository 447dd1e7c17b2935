"""The identity of a run: hashes of its result-relevant configuration, engine spec and openings.
Resume refuses a run whose identity changed."""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from ...fileio import file_digest
from ...spec.model import EngineSpec
from .config import RunConfig, stored_key


def run_identity(cfg: RunConfig, spec: EngineSpec, openings: Path | None) -> dict:
    """The identity of a run: hashes of its result-relevant config, engine spec and openings.

    Two runs with the same identity and seed produce the same generations; resume refuses a run
    whose identity differs from the stored one.
    """
    config_json = json.dumps(cfg.identity_dict(), sort_keys=True, default=str)
    parts = {
        "config": hashlib.sha256(config_json.encode()).hexdigest(),
        "engine_spec": spec.digest,
        "openings": file_digest(openings),
    }
    parts["hash"] = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]
    return parts


def config_differences(old: dict, new: dict) -> list[str]:
    """Human-readable 'key: old -> new' lines for the result-relevant stored keys that differ."""
    out = []
    left_out = {stored_key(k) for k in RunConfig.NON_IDENTITY}
    for key in sorted(set(old) | set(new)):
        if key in left_out:
            continue
        if old.get(key) != new.get(key):
            out.append(f"{key}: {old.get(key)!r} -> {new.get(key)!r}")
    return out


def default_run_id(cfg: RunConfig, identity: dict) -> str:
    name = cfg.strategy.replace(":", "-")  # ng:NAME -> ng-NAME
    return f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{identity['hash'][:6]}"
