"""``evotune nn train-moves``: fit a move model (engine/movemodel/modelfile.py) to the moves a search chose.

Data: ``FEN | score | result | move`` lines (``evotune label --move``: the labelling engine's
search chose ``move``). Each position's legal moves and their active features come from the
core (:func:`~evotune.engine.movemodel.modelfile.move_features`: every block; a feature set 1 training
reads the first 8, set 2 all 16); the loss is the softmax cross-entropy of the chosen move over
the legal moves (nats; with ``target`` ``visits``, of the shares of a UCT search's root visits,
``label --visits``'s fifth field: AlphaZero's policy target), the model's score being the sum
of its moves' feature weights (float64, nats, while training), plus with ``hidden`` H > 0 the hidden layer's
``sum_j out_j * clip(acc_j, 0, 1)`` (``acc_j`` = bias plus the move's features' weights into
unit j; hidden weights drawn from the seed, biases 0.5, output weights 0: training starts from
the linear model's zero). Adam over minibatches of positions, in an order
drawn from the seed each epoch; a held-out share of the positions (in blocks of consecutive
lines, drawn from the seed) is never trained on. Single-threaded numba kernels: the same data,
settings and seed give the same bytes. The model written is the weights x ``scale`` rounded
(hidden weights and biases x 64; the held-out figures are those of the rounded model, as the
engine plays it).

Figures per epoch: the training loss, and on the held-out positions the loss, top-1 and top-3
accuracy (the chosen move the model's best, or among its best three; tied scores share the
credit, as a random tie-break would). The baseline is the engine's ordering prior at the root of a
search (empty history: captures and promotions by MVV/LVA, every quiet move equal), scored alike.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import chess
import numpy as np
from numba import njit

from ..engine.movemodel.chessref import ordering_scores
from ..engine.movemodel.corescores import move_features
from ..engine.movemodel.modelfile import (
    HIDDEN_MAX,
    N_BLOCKS,
    SCALE_DEFAULT,
    SET_BLOCKS,
    SET_FEATURES,
    WEIGHT_MAX,
    MoveModel,
)
from ..errors import ConfigError, FieldError
from ..fileio import read_text
from ..seeding import STREAM_MOVE_TRAIN, generator
from ..spec.movefeatures import ACT_SHIFT, FEATURE_SET_LATEST
from .labels import parse_visits_line

log = logging.getLogger(__name__)

TARGETS = ("move", "visits")
"""What a move model learns: the chosen move, or a UCT search's visit distribution."""
PARAM_MAX = float(WEIGHT_MAX)
"""The largest weight (nats) a training keeps: beyond it every scale rounds it past the file's
+-WEIGHT_MAX (a diverged training)."""
MOMENT_MAX = 1e6
"""The largest Adam first moment (and square root of a second) a checkpoint may hold: a mean of
gradients, each bounded by the legal moves and the L2 term."""
REALS = {"lr": (0.0, 1.0, False), "l2": (0.0, 1.0, True), "val_share": (0.0, 0.99, False)}
"""The real settings' ranges: (lowest, highest, whether the lowest is allowed). Beyond them
Adam's steps or the penalty overflow float64 (a NaN model); a held-out share leaves some
positions to train."""


@dataclass(frozen=True, kw_only=True)
class MoveTrainSettings:
    """How ``nn train-moves`` trains (everything here decides the model)."""

    epochs: int = 20
    """Passes over the training positions."""
    batch: int = 256
    """Positions per Adam step."""
    lr: float = 0.01
    """Adam's learning rate (nats per step, roughly)."""
    l2: float = 1e-5
    """L2 penalty on the weights, per position."""
    val_share: float = 0.1
    """Share of the positions held out."""
    val_block: int = 10
    """Held-out positions come in blocks of this many consecutive lines (one game's)."""
    seed: int = 1
    """Seed of the split and the epochs' orders."""
    scale: int = SCALE_DEFAULT
    """Score units per nat of the model written."""
    hidden: int = 0
    """Hidden units (0: the linear model)."""
    features: int = FEATURE_SET_LATEST
    """The feature set (spec/movefeatures.py's SET_BLOCKS: 1 the move, 2 also the position
    around it)."""
    target: str = "move"
    """What the model learns: ``move`` the chosen move (cross-entropy of that move), ``visits``
    a UCT search's visit distribution over the root moves (``label --visits``'s fifth field;
    cross-entropy against the visit shares, as AlphaZero's policy is trained)."""

    def __post_init__(self) -> None:
        for name, low, high in (("epochs", 1, 100_000), ("batch", 1, 1 << 20),
                                ("hidden", 0, HIDDEN_MAX),
                                ("val_block", 1, 1 << 20), ("scale", 1, 10_000),
                                ("seed", 0, 2**63 - 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise FieldError(name, f"must be an integer from {low} to {high}, got {v!r}")
        if (isinstance(self.features, bool) or not isinstance(self.features, int)
                or self.features not in SET_BLOCKS):
            raise FieldError("features", f"must be one of {', '.join(map(str, SET_BLOCKS))}, got "
                                         f"{self.features!r}")
        if self.target not in TARGETS:
            raise FieldError("target", f"must be one of {', '.join(TARGETS)}, got "
                                       f"{self.target!r}")
        for name, (lowf, highf, low_ok) in REALS.items():
            v = getattr(self, name)
            ok = (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                  and (lowf <= v if low_ok else lowf < v) and v <= highf)
            if not ok:
                raise FieldError(name, f"must be a number in {'[' if low_ok else '('}{lowf:g}, "
                                       f"{highf:g}], got {v!r}")


@dataclass(frozen=True)
class MoveData:
    """Positions with their legal moves' features and the chosen move."""

    starts: np.ndarray
    """int64 (P + 1,): position p's moves are rows starts[p]:starts[p + 1]."""
    feats: np.ndarray
    """int64 (moves, N_BLOCKS): the active features of each legal move."""
    target: np.ndarray
    """int64 (P,): the row of the chosen move."""
    dist: np.ndarray
    """float64 (moves,): the training target's share of each move (the chosen move's 1, or its
    share of the root's visits)."""
    order: np.ndarray
    """float64 (moves,): the ordering prior's score of each move (the baseline)."""

    def __len__(self) -> int:
        return int(self.target.size)


@dataclass(frozen=True)
class Figures:
    """Loss and accuracy of scores on positions."""

    loss: float
    """Mean cross-entropy of the chosen move (nats)."""
    top1: float
    """Share of positions whose chosen move scores best (ties share the credit)."""
    top3: float
    """Share of positions whose chosen move is among the best three."""


def read_move_data(paths, *, max_bad: int = 0, target: str = "move") -> MoveData:
    """The positions of ``paths`` (``FEN | score | result | move`` lines; with ``target``
    ``visits``, ``... | move | visits`` lines) with their features; ConfigError naming the file
    and line after more than ``max_bad`` bad lines, or when no position is left."""
    starts, feats, tgt, order, dist = [0], [], [], [], []
    bad = 0
    for path in paths:
        text = read_text(Path(path), "move data file", error=ConfigError)
        for no, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            got = parse_visits_line(line)
            if isinstance(got, str) or (target == "visits" and got[2] is None):
                bad += 1
                if bad > max_bad:
                    why = got if isinstance(got, str) else (
                        "no visits: expected 'FEN | score | result | move | visits' (evotune "
                        "label --visits)")
                    raise ConfigError(f"{path}:{no}: {why} (--max-bad {max_bad})")
                continue
            fen, uci, visits = got
            board = chess.Board(fen)
            moves, f = move_features(board)
            names = [m.uci() for m in moves]
            tgt.append(starts[-1] + names.index(uci))
            share = np.zeros(len(moves))
            if target == "visits":
                assert visits is not None
                share[:] = [visits.get(n, 0) for n in names]
                share /= share.sum()
            else:
                share[names.index(uci)] = 1.0
            dist.append(share)
            feats.append(f)
            order.append(ordering_scores(board, moves))
            starts.append(starts[-1] + len(moves))
    if len(tgt) == 0:
        raise ConfigError(f"{', '.join(map(str, paths))}: no 'FEN | score | result | move"
                          + (" | visits' lines (evotune label --visits" if target == "visits"
                             else "' lines (evotune label --move")
                          + " writes them)")
    if bad:
        log.warning("skipped %d bad line(s) of move data", bad)
    return MoveData(starts=np.array(starts, dtype=np.int64),
                    feats=np.concatenate(feats).astype(np.int64),
                    target=np.array(tgt, dtype=np.int64),
                    dist=np.concatenate(dist).astype(np.float64),
                    order=np.concatenate(order).astype(np.float64))


def split(n: int, settings: MoveTrainSettings) -> tuple[np.ndarray, np.ndarray]:
    """(training, held-out) position indices: blocks of ``val_block`` consecutive positions,
    a ``val_share`` of them drawn from the seed (at least one block, and one left to train)."""
    blocks = -(-n // settings.val_block)
    if blocks < 2:
        raise ConfigError(f"{n} positions make {blocks} block(s) of --val-block "
                          f"{settings.val_block}; give more data or a smaller --val-block")
    k = min(blocks - 1, max(1, round(settings.val_share * blocks)))
    held = np.zeros(blocks, dtype=bool)
    held[generator(settings.seed, STREAM_MOVE_TRAIN, 0).permutation(blocks)[:k]] = True
    mask = np.repeat(held, settings.val_block)[:n]
    idx = np.arange(n, dtype=np.int64)
    return idx[~mask], idx[mask]


# ---- kernels ------------------------------------------------------------------------------------

def n_params(hidden: int, features: int = 1) -> int:
    """The trainer's parameters of a model of ``hidden`` units over feature set ``features``
    (F features): the linear weights, then F x hidden hidden weights (feature-major), hidden
    biases, hidden output weights."""
    nf = SET_FEATURES[features]
    return nf + hidden * (nf + 2)


@njit(cache=True)
def _move_scores(w, nf, nh, feats, a, b, out, acc):
    """Scores of moves a:b into ``out`` (``nf`` features, the columns of ``feats``); each
    move's hidden accumulators into ``acc``."""
    bias = nf + nf * nh
    for i in range(a, b):
        s = 0.0
        for k in range(feats.shape[1]):
            s += w[feats[i, k]]
        for j in range(nh):
            x = w[bias + j]
            for k in range(feats.shape[1]):
                x += w[nf + feats[i, k] * nh + j]
            acc[i - a, j] = x
            s += w[bias + nh + j] * min(max(x, 0.0), 1.0)
        out[i - a] = s


@njit(cache=True)
def _step(w, m, v, t, nf, nh, batch, starts, feats, dist, lr, l2, buf, acc, grad):
    """One Adam step on the positions ``batch``; returns their summed loss (nats): the
    cross-entropy of the target shares ``dist`` (one-hot for a chosen move)."""
    grad[:] = 0.0
    loss = 0.0
    bias = nf + nf * nh
    for p in batch:
        a, b = starts[p], starts[p + 1]
        _move_scores(w, nf, nh, feats, a, b, buf, acc)
        top = buf[:b - a].max()
        z = 0.0
        for i in range(b - a):
            buf[i] = math.exp(buf[i] - top)
            z += buf[i]
        ce = 0.0
        for i in range(b - a):
            if dist[a + i] > 0.0:
                ce += dist[a + i] * math.log(buf[i])
        loss += math.log(z) - ce
        for i in range(b - a):
            g = buf[i] / z - dist[a + i]
            for k in range(feats.shape[1]):
                grad[feats[a + i, k]] += g
            for j in range(nh):
                x = acc[i, j]
                grad[bias + nh + j] += g * min(max(x, 0.0), 1.0)
                if 0.0 < x < 1.0:
                    d = g * w[bias + nh + j]
                    grad[bias + j] += d
                    for k in range(feats.shape[1]):
                        grad[nf + feats[a + i, k] * nh + j] += d
    n = batch.size
    b1, b2, eps = 0.9, 0.999, 1e-8
    for j in range(w.size):
        g = grad[j] / n + l2 * w[j]
        m[j] = b1 * m[j] + (1 - b1) * g
        v[j] = b2 * v[j] + (1 - b2) * g * g
        mh = m[j] / (1 - b1 ** t)
        vh = v[j] / (1 - b2 ** t)
        w[j] -= lr * mh / (math.sqrt(vh) + eps)
    return loss


@njit(cache=True)
def _figures(scores, unit, positions, starts, target):
    """(summed loss, top-1 credit, top-3 credit) of the per-move ``scores`` (``unit`` per nat)
    over ``positions``."""
    loss = 0.0
    top1 = 0.0
    top3 = 0.0
    for p in positions:
        a, b = starts[p], starts[p + 1]
        best = scores[a:b].max()
        z = 0.0
        for i in range(a, b):
            z += math.exp((scores[i] - best) / unit)
        st = scores[target[p]]
        loss += math.log(z) - (st - best) / unit
        above = 0
        ties = 0
        for i in range(a, b):
            if scores[i] > st:
                above += 1
            elif scores[i] == st:
                ties += 1
        top1 += max(0, min(ties, 1 - above)) / ties
        top3 += max(0, min(ties, 3 - above)) / ties
    return loss, top1, top3


def figures(scores: np.ndarray, unit: float, positions: np.ndarray, data: MoveData) -> Figures:
    """Loss and accuracy of per-move ``scores`` (``unit`` score units per nat) on
    ``positions``."""
    loss, t1, t3 = _figures(np.asarray(scores, dtype=np.float64), float(unit), positions,
                            data.starts, data.target)
    n = max(1, positions.size)
    return Figures(loss=loss / n, top1=t1 / n, top3=t3 / n)


def model_scores(model: MoveModel, data: MoveData) -> np.ndarray:
    """Every move's score under ``model`` (:meth:`MoveModel.scores`, the engine's integers,
    unclamped: the clamp at +-2000 is 20 nats at scale 100)."""
    return model.scores(data.feats).astype(np.float64)


def quantise(w: np.ndarray, scale: int, hidden: int = 0, features: int = 1) -> MoveModel:
    """The model of the trainer's parameters ``w`` (nats; :func:`n_params`): the linear and
    output weights x ``scale``, the hidden weights and biases x 64, rounded and clipped."""
    def q(x: np.ndarray, unit: int) -> np.ndarray:
        return np.clip(np.rint(x * unit), -WEIGHT_MAX, WEIGHT_MAX).astype(np.int32)
    if w.size != n_params(hidden, features):
        raise ValueError(f"{w.size} parameters are not a model of {hidden} hidden units over "
                         f"feature set {features}")
    if not np.all(np.isfinite(w)):
        raise ValueError("the parameters are not finite")
    nf = SET_FEATURES[features]
    nw = nf * hidden
    one = 1 << ACT_SHIFT
    return MoveModel(weights=q(w[:nf], scale), scale=scale,
                     hidden_weights=q(w[nf:nf + nw], one).reshape(nf, hidden),
                     hidden_bias=q(w[nf + nw:nf + nw + hidden], one),
                     out_weights=q(w[nf + nw + hidden:], scale))


@dataclass(frozen=True)
class EpochReport:
    """What an epoch reached."""

    epoch: int
    """1-based."""
    train_loss: float
    """Mean training loss over the epoch's steps (nats)."""
    held_out: Figures
    """The rounded model on the held-out positions."""


@dataclass(frozen=True)
class MoveTrainState:
    """Where a training stands after an epoch: everything the next epoch needs (the epochs'
    orders are drawn from the seed and the epoch, so the epoch is the RNG's position)."""

    epoch: int
    """Epochs finished (0: the zero weights)."""
    steps: int
    """Adam steps taken."""
    w: np.ndarray
    """float64 (n_params(hidden),): the weights (nats)."""
    m: np.ndarray
    """float64 (n_params(hidden),): Adam's first moments."""
    v: np.ndarray
    """float64 (n_params(hidden),): Adam's second moments."""

    @staticmethod
    def zero(settings: MoveTrainSettings | None = None) -> MoveTrainState:
        """Nothing trained: zero linear and output weights (every legal move equally likely);
        with hidden units, hidden weights uniform in +-0.25 drawn from the seed and biases 0.5
        (each unit starts inside its clip, where it learns)."""
        hidden = settings.hidden if settings is not None else 0
        features = settings.features if settings is not None else 1
        size = n_params(hidden, features)
        nf = SET_FEATURES[features]
        w = np.zeros(size)
        if hidden and settings is not None:
            nw = nf * hidden
            w[nf:nf + nw] = generator(settings.seed, STREAM_MOVE_TRAIN, 2).uniform(-0.25, 0.25,
                                                                                  nw)
            w[nf + nw:nf + nw + hidden] = 0.5
        return MoveTrainState(epoch=0, steps=0, w=w, m=np.zeros(size), v=np.zeros(size))


def train_moves(data: MoveData, settings: MoveTrainSettings, *,
                report: Callable[[EpochReport], None] | None = None,
                start: MoveTrainState | None = None,
                on_epoch: Callable[[MoveTrainState, EpochReport], None] | None = None
                ) -> MoveModel:
    """Train a model on ``data`` from ``start`` (default: zero weights) to ``settings.epochs``;
    ``on_epoch`` gets each epoch's state (copies) and figures, before ``report``."""
    train, held = split(len(data), settings)
    st = start if start is not None else MoveTrainState.zero(settings)
    w, m, v = (np.array(a, dtype=np.float64) for a in (st.w, st.m, st.v))
    nh, fs = settings.hidden, settings.features
    nf = SET_FEATURES[fs]
    if w.size != n_params(nh, fs):
        raise ConfigError(f"the training state holds {w.size} parameters, not a model of {nh} "
                          f"hidden units over feature set {fs}")
    feats = np.ascontiguousarray(data.feats[:, :SET_BLOCKS[fs]])
    grad = np.zeros_like(w)
    buf = np.zeros(256, dtype=np.float64)
    acc = np.zeros((256, max(1, nh)), dtype=np.float64)
    t = st.steps
    model = quantise(w, settings.scale, nh, fs)
    for epoch in range(st.epoch + 1, settings.epochs + 1):
        order = train[generator(settings.seed, STREAM_MOVE_TRAIN, 1, epoch).permutation(
            train.size)]
        total = 0.0
        for s in range(0, order.size, settings.batch):
            t += 1
            total += _step(w, m, v, t, nf, nh, order[s:s + settings.batch], data.starts,
                           feats, data.dist, settings.lr, settings.l2, buf, acc, grad)
        if not (np.all(np.isfinite(w)) and np.abs(w).max(initial=0.0) <= PARAM_MAX):
            raise FieldError("lr", f"{settings.lr:g} with l2 {settings.l2:g} made the weights "
                                   f"diverge in epoch {epoch} (beyond +-{PARAM_MAX:g} nats or "
                                   "not finite); give a smaller --lr or --l2")
        model = quantise(w, settings.scale, nh, fs)
        if report is not None or on_epoch is not None:
            r = EpochReport(epoch=epoch, train_loss=total / max(1, order.size),
                            held_out=figures(model_scores(model, data), settings.scale, held,
                                             data))
            if on_epoch is not None:
                on_epoch(MoveTrainState(epoch=epoch, steps=t, w=w.copy(), m=m.copy(),
                                        v=v.copy()), r)
            if report is not None:
                report(r)
    return model


def baseline(data: MoveData, settings: MoveTrainSettings) -> Figures:
    """The ordering prior's figures on the held-out positions (its softmax at temperature 100,
    the spec's default prior_temperature)."""
    _, held = split(len(data), settings)
    return figures(data.order, 100.0, held, data)


assert N_BLOCKS == max(SET_BLOCKS.values())
