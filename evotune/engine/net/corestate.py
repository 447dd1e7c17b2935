"""Nets in the core's state: the header a net puts in the weights slots and the tail of ``S`` that
holds the nets' arrays and the accumulator stack (layout in engine/core/nnue.py).

The engine's API takes a :class:`~evotune.engine.net.network.Net` where it takes the weights of a
linear feature set, with ``features="nnue"``; this module turns one or two such values (the two
sides of a core game) into the int64 rows for ``S[S_W:]`` and one :class:`Tail`.
"""
from __future__ import annotations

from dataclasses import dataclass

import chess
import numpy as np

from ...errors import WeightsError
from ..core import layout as T
from ..core import nnue as N
from .inputs import king_view
from .network import Net


def as_net(value, what: str) -> Net:
    """``value`` when it is a Net; WeightsError naming ``what`` otherwise."""
    if not isinstance(value, Net):
        raise WeightsError(f"{what}: the nnue evaluation takes a network (a Net, e.g. "
                           f"net.network.read_net(path)), not {type(value).__name__}")
    return value


@dataclass(frozen=True)
class Tail:
    """The nets' blocks (int16) and the int64 slots the tail needs behind the TT."""

    blocks: np.ndarray
    """int16: the net blocks, one after the other (then the accumulator stack, not stored)."""
    slots: int
    """int64 slots of the whole tail (blocks and stack)."""

    def install(self, S: np.ndarray, tt_entries: int) -> None:
        """Copy the blocks into the tail of ``S`` (whose TT has ``tt_entries`` entries)."""
        start = 4 * (T.S_TT + 2 * tt_entries)
        S.view(np.int16)[start:start + self.blocks.size] = self.blocks


def header(net: Net, net_off: int, acc_off: int, fin_off: int = 0) -> np.ndarray:
    """The int64 header of ``net`` (S[S_W:]) with its block at ``net_off``, the accumulator
    stack at ``acc_off`` and the Finny table (king buckets) at ``fin_off`` (int16 units from the
    tail's start)."""
    row = np.zeros(N.HEADER, dtype=np.int64)
    row[N.N_HIDDEN] = net.hidden
    row[N.N_ACT] = net.activation_code
    row[N.N_QA] = net.qa
    row[N.N_QAQB] = net.qa * net.qb
    row[N.N_SCALE] = net.scale
    row[N.N_L1B] = net.l1b_values[0]
    row[N.N_NET] = net_off
    row[N.N_ACC] = acc_off
    row[N.N_DOT16] = int(all(N.dot16_exact(net.qa, w) for w in net.l1w_rows))
    row[N.N_KB] = net.king_bucket_count
    row[N.N_OB] = net.output_buckets
    row[N.N_ODIV] = -(-32 // net.output_buckets)
    row[N.N_FIN] = fin_off
    row[N.N_L1BS:N.N_L1BS + net.output_buckets] = net.l1b_values
    row[N.N_KVIEW:N.N_KVIEW + 128] = king_views(net)
    return row


def king_views(net: Net) -> np.ndarray:
    """int64 (128,): for each perspective (White, Black) and square of its king, 8 x bucket +
    flip (7 on files e-h, else 0), as net.inputs.king_view states them (all 0 without king
    buckets)."""
    return np.array([8 * b + x for persp in (chess.WHITE, chess.BLACK) for sq in range(64)
                     for b, x in [king_view(net.king_buckets, sq, persp)]], dtype=np.int64)


def block(net: Net) -> np.ndarray:
    """The int16 block of ``net``: l0w row by row, l0b, l1w bucket by bucket, zero-padded to 64
    bytes."""
    k, n, h = net.king_bucket_count, net.output_buckets, net.hidden
    out = np.zeros(N.net_block(h, k, n), dtype=np.int16)
    n0 = N.INPUTS * k * h
    out[:n0] = net.l0w.reshape(-1)
    out[n0:n0 + h] = net.l0b
    out[n0 + h:n0 + h + 2 * h * n] = net.l1w.reshape(-1)
    return out


def rows(values) -> tuple[list[np.ndarray], Tail | None]:
    """The weight rows of ``values`` (int64 arrays stay as they are, Nets become headers) and
    the tail their nets need (None when there is no net). Two equal nets share one block; the
    accumulator stack and the Finny table (sized for the largest) are shared (every search's
    refresh rebuilds them)."""
    out: list[np.ndarray] = []
    blocks: list[np.ndarray] = []
    placed: dict[str, int] = {}
    nets = [v for v in values if isinstance(v, Net)]
    if not nets:
        return list(values), None
    at = 0
    for v in nets:
        if v.checksum not in placed:
            placed[v.checksum] = at
            blocks.append(block(v))
            at += blocks[-1].size
    acc = at
    fin = acc + N.stack_size(max(v.hidden for v in nets))
    fin = -(-fin // 32) * 32
    total16 = fin + max(N.finny_size(v.hidden, v.king_bucket_count) for v in nets)
    for v in values:
        out.append(header(v, placed[v.checksum], acc, fin) if isinstance(v, Net) else v)
    return out, Tail(blocks=np.concatenate(blocks), slots=-(-total16 // 4))
