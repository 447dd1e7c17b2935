"""A training's initial net fitted to a linear evaluation (``nn train --init eval:SPEC``).

On little data (the README's first net: 36k positions of shannon's self-play) a net trained
from random numbers predicts the search scores it learns from worse than the linear evaluation
that played the games, and plays about level with it (docs/results/first-net.md). Started from a
net that first learnt that evaluation, it keeps what the evaluation knows where the data is
thin, and learns the search's corrections on top: the same data then gives a net clearly better
than the evaluation.

The initial net of ``init = "eval:SPEC[:WEIGHTS]"`` is made from the training's own positions:

1. each position's quiescence score under the built-in linear evaluation of SPEC (its reference
   weights, or the WEIGHTS file's), White's view in centipawns clipped to +-32000, from the
   core's batch quiescence (:func:`evotune.engine.quiet.quiescence_scores`); on datagen's quiet
   positions that is the static evaluation;
2. a net trained on those scores alone (wdl 0) from the seed's random net, with the training's
   own settings (shape, batch, seed, validation split) but ``init_epochs`` epochs at the default
   learning rate :data:`INIT_LR`, constant; then quantised, as a net file given as ``--init``
   is read, so that the training starts from exactly the net stored as initial.nnue.

Both steps are deterministic, so the same data, settings and seed give the same initial net and
the same trained net, bit for bit.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ...engine.evaluation import Evaluation, spec_evaluation
from ...engine.quiet import quiescence_scores
from ...errors import ConfigError, EvotuneError
from ...spec.file import load_engine_spec
from ...spec.player import parse_engine_ref
from ...weightsio import load_weights_file
from ..phirows import fit_evaluation
from .bulletdata import board_fen
from .data import SCORE_LIMIT, PackedData
from .floatnet import FloatNet
from .trainer import Progress, TrainSettings, train_packed

log = logging.getLogger(__name__)

EVAL_PREFIX = "eval:"
"""``init`` of a training whose initial net is fitted to a linear evaluation."""
INIT_EPOCHS = 100
"""Epochs of the fit to the evaluation by default (measured on the README's first net)."""
INIT_LR = TrainSettings().lr
"""The fit's learning rate (constant)."""
_CHUNK = 65536
"""Positions per call of the core's batch quiescence."""


def is_eval_init(init: str) -> bool:
    """True when ``init`` names a linear evaluation (``eval:SPEC[:WEIGHTS]``)."""
    return init.startswith(EVAL_PREFIX)


@dataclass(frozen=True)
class EvalTarget:
    """The linear evaluation an initial net is fitted to, with its weights."""

    text: str
    """SPEC[:WEIGHTS] as given after ``eval:``."""
    evaluation: Evaluation
    """The spec's evaluation (a linear feature set: shannon, pst, extended or a spec's own)."""
    weights: np.ndarray
    """Its weights (the reference values or the file's)."""
    weights_file: str | None
    """The WEIGHTS file, when one is named."""


def parse_eval_init(init: str) -> EvalTarget:
    """The evaluation of ``eval:SPEC[:WEIGHTS]``; ConfigError (one line) when SPEC is no
    built-in linear evaluation or WEIGHTS does not fit it."""
    text = init.removeprefix(EVAL_PREFIX)
    if not text:
        raise ConfigError(f"--init {init}: name a built-in linear evaluation after 'eval:', "
                          "e.g. eval:shannon or eval:extended:texel.json")
    try:
        ref = parse_engine_ref(text)
        spec = load_engine_spec(ref.spec_name)
        evaluation = spec_evaluation(spec)
        if evaluation is None or evaluation.reads_file:
            raise ConfigError(f"engine spec {spec.name} evaluates with a network; an initial "
                              "net is fitted to a linear evaluation (shannon, pst, extended "
                              "or your own .toml with features = ...)")
        fit_evaluation(spec)  # a spec with search weights is refused as a fit's is
        weights = (load_weights_file(ref.file, spec) if ref.file is not None
                   else spec.space().reference_array)
    except EvotuneError as exc:
        raise ConfigError(f"--init {init}: {exc}") from None
    return EvalTarget(text, evaluation, np.asarray(weights, dtype=np.float64), ref.file)


def eval_scores(data: PackedData, target: EvalTarget) -> np.ndarray:
    """int16 (n,): each position's quiescence score under ``target``'s evaluation, White's view in
    centipawns clipped to +-SCORE_LIMIT (a packed position has no castling or en passant
    rights)."""
    n = len(data)
    out = np.zeros(n, dtype=np.int16)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        fens = [board_fen(int(data.occ[i]), data.pcs[i], int(data.stm[i]))
                for i in range(start, stop)]
        score = quiescence_scores(fens, target.weights, target.evaluation)
        white = np.where(data.stm[start:stop] == 0, score, -score)
        out[start:stop] = np.clip(white, -SCORE_LIMIT, SCORE_LIMIT)
    return out


def init_settings(settings: TrainSettings, epochs: int) -> TrainSettings:
    """The settings of the fit to the evaluation: the training's, with the scores alone (wdl
    0), ``epochs`` epochs and the constant learning rate :data:`INIT_LR`."""
    return replace(settings, wdl=0.0, epochs=epochs, lr=INIT_LR, lr_drop=0)


def fit_to_eval(data: PackedData, settings: TrainSettings, target: EvalTarget, *,
                epochs: int = INIT_EPOCHS, workers: int = 1,
                progress: Callable[[Progress], None] | None = None) -> FloatNet:
    """The initial net: the seed's random net trained ``epochs`` epochs on ``target``'s
    scores of ``data``'s positions (the module docstring)."""
    scored = replace(data, score=eval_scores(data, target), info=dict(data.info))
    fit = init_settings(settings, epochs)
    result = train_packed(scored, fit, workers=workers, progress=progress)
    last = result.records[-1]
    log.info("initial net fitted to %s: %d epochs, loss train %.6f, validation %s",
             target.text, epochs, last.train_loss,
             "-" if last.val_loss is None else f"{last.val_loss:.6f}")
    return FloatNet.from_net(result.engine_net())  # quantised: initial.nnue is the start
