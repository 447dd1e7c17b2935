"""The training kind, one package: net trainings (``evotune nn train``). Its config
(:mod:`.config`, :class:`TrainConfig`, the trainer's settings typed), its plan resolved once
(:mod:`.plan`, :class:`TrainPlan`: an ``eval:`` initial net's spec read once), its solver (:mod:`.solver`:
new, open, execute, one stored epoch and checkpoint per step), its view (:mod:`.view`: status,
loss plot, report, the net exported) and its lifecycle glue (:mod:`.kind`, :data:`TRAINING`).
The numerics stay in :mod:`evotune.learn.nn` (the trainer, the data, the initial net); the
records the store reads (epoch lines, the checkpoint's form) in :mod:`evotune.runs.trainrecords`."""
from __future__ import annotations

from .config import STRATEGY, TrainConfig, train_config_from_dict
from .kind import TRAIN_STORED, TRAINING, TrainingKind, few_steps_note
from .plan import TrainPlan, plan_training
from .solver import (
    execute_training,
    load_state,
    new_training,
    open_plan,
    open_training,
    stored_net,
)

__all__ = ["STRATEGY", "TRAINING", "TRAIN_STORED", "TrainConfig", "TrainPlan", "TrainingKind",
           "execute_training", "few_steps_note", "load_state", "new_training", "open_plan",
           "open_training", "plan_training", "stored_net", "train_config_from_dict"]
