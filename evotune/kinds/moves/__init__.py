"""The move-model kind, one package: move-model trainings (``evotune nn train-moves``). Its
config (:mod:`.config`, :class:`MoveRunConfig`, the trainer's settings typed), its checkpoint
(:mod:`.checkpoint`: the commit point and its validator), its solver (:mod:`.solver`: new, open,
execute, one checkpoint per epoch), its view (:mod:`.view`: status, plot) and its lifecycle
glue (:mod:`.kind`, :data:`MOVES`). The numerics stay in :mod:`evotune.learn.movetrain`."""
from __future__ import annotations

from .checkpoint import (
    CHECKPOINT_FILE,
    MODEL_FILE,
    Checkpoint,
    EpochFigures,
    read_checkpoint,
    stored_model,
    stored_move_model,
    write_checkpoint,
)
from .config import METHOD, MoveRunConfig, read_stored
from .kind import MOVES, MOVES_STORED, MovesKind, epoch_line
from .solver import check_model_out, execute_move_run, new_move_run, open_move_run

__all__ = ["CHECKPOINT_FILE", "METHOD", "MODEL_FILE", "MOVES", "MOVES_STORED", "Checkpoint",
           "EpochFigures", "MoveRunConfig", "MovesKind", "check_model_out", "epoch_line",
           "execute_move_run", "new_move_run", "open_move_run", "read_checkpoint",
           "read_stored", "stored_model", "stored_move_model", "write_checkpoint"]
