"""What the tune page says of a fit and of a training besides their curves, from the files
they keep (what a file does not hold is said to be absent, never guessed):

- a Texel fit (:mod:`evotune.kinds.fit.solver`): its ridge (the state keeps it from the first
  epoch on; ``texel.json``, written when the fit ends, says whether validation chose it and
  what was tried), its positions (training and validation) and the rate they were read and
  turned into features at (``texel.json``), and the positions fitted per second over its
  epochs (the training positions times the epochs over the epochs' time);
- a training (:mod:`evotune.kinds.training`): its net's shape, parameters and checksum
  (read from ``net.nnue`` by the net reader), the file's SHA-256, and the positions per second
  of its last epoch (from the epoch records).
"""
from __future__ import annotations

import hashlib
from typing import Any

from ..engine.net.network import read_net
from ..learn.nn.initnet import NET_FILE
from ..runs.store import Store


def fit_facts(store: Store, seconds_fitting: float | None) -> dict[str, Any]:
    """A fit's ridge and positions (``seconds_fitting``: its epochs' time, from its generation
    files; None when it has none yet)."""
    state = store.current_state()
    summary = store.read_document("texel")
    strategy = state.strategy if state is not None and isinstance(state.strategy, dict) else {}
    l2 = strategy.get("l2")
    out: dict[str, Any] = {"l2": l2 if isinstance(l2, (int, float)) else None,
                           "absent": []}
    if summary is None:
        out["absent"].append("texel.json (written when the fit ends): the positions, their "
                             "rate and how the ridge was chosen")
        return out
    if isinstance(summary.get("l2"), (int, float)):
        out["l2"] = summary["l2"]
    out["l2_chosen_by_validation"] = bool(summary.get("l2_chosen_by_validation"))
    tried = summary.get("l2_tried")
    out["l2_tried"] = [t for t in tried if isinstance(t, dict)] if isinstance(tried, list) \
        else []
    for k in ("positions_read", "train", "validation", "epochs", "seconds_extract"):
        v = summary.get(k)
        out[k] = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if out["positions_read"] and out["seconds_extract"]:
        out["read_per_s"] = out["positions_read"] / out["seconds_extract"]
    if out["train"] and out["epochs"] and seconds_fitting:
        out["fitted_per_s"] = out["train"] * out["epochs"] / seconds_fitting
    return out


def net_facts(store: Store, records: list[dict]) -> dict[str, Any]:
    """A training's net (``net.nnue``, the latest epoch's): shape, parameters, checksum, the
    file's SHA-256; the positions per second of its last epoch record."""
    out: dict[str, Any] = {"absent": []}
    path = store.root / NET_FILE
    if path.is_file():
        net = read_net(path)  # NetError naming the file: the page shows it damaged
        out.update(shape=net.shape, describe=net.describe(), parameters=net.parameters,
                   checksum=net.checksum,
                   sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    else:
        out["absent"].append(f"{NET_FILE} (written after the first epoch)")
    last = records[-1] if records else None
    if last and isinstance(last.get("positions"), (int, float)) and last.get("seconds"):
        out["positions_per_s"] = last["positions"] / last["seconds"]
        out["epoch"] = last.get("epoch")
    else:
        out["absent"].append("an epoch record with its positions and time")
    return out
