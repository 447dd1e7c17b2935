"""A training's plan, resolved once (issue 57): its config and its initial net with an
``eval:SPEC[:WEIGHTS]`` init's evaluation read (:class:`TrainPlan`, :func:`plan_training`).
``evotune nn train`` and ``evotune resume`` of a training read that spec once each
(``tests/test_train_plan.py`` counts), and what follows (the identity, the initial net's fit,
a resume before the first checkpoint) takes the plan's values.

A training has no engine spec, weight space or game limits of its own: its settings are typed
when its config is made (:class:`~evotune.learn.nn.trainer.TrainSettings`), so the plan adds only
what a config names as text and must read from a file."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import ConfigError
from ...fileio import check_input_file
from ...learn.nn.initnet import InitialNet
from ...learn.nn.trainer import TrainSettings
from .config import TrainConfig


@dataclass(frozen=True)
class TrainPlan:
    """A training's config with its initial net resolved."""

    config: TrainConfig
    """What the run stores (its manifest's config)."""
    initial: InitialNet
    """Its starting net, an ``eval:`` init's evaluation read once."""

    @property
    def settings(self) -> TrainSettings:
        """The trainer's settings (the config's)."""
        return self.config.settings

    def with_epochs(self, epochs: int) -> TrainPlan:
        """This plan continued to ``epochs`` epochs (``resume --generations``), its initial net
        as resolved (FieldError for a bad number)."""
        config = replace(self.config, settings=replace(self.config.settings, epochs=epochs))
        return TrainPlan(config, replace(self.initial, settings=config.settings))


def plan_training(cfg: TrainConfig | TrainPlan, *, check_data: bool = False) -> TrainPlan:
    """``cfg``'s plan (a plan as it is). ``check_data``: first check that each data file can be
    read (a new training's inputs, one line each). ConfigError when the initial net names no
    linear evaluation, or one fitted to an evaluation is asked to stream its positions."""
    if isinstance(cfg, TrainPlan):
        return cfg
    if check_data:
        for p in cfg.data:
            check_input_file(p, "data file")
    initial = cfg.initial.resolved()
    if initial.fits_eval and cfg.settings.stream:
        raise ConfigError(f"--init {cfg.init}: an initial net fitted to an evaluation "
                          "needs the positions in memory; give --stream 0")
    return TrainPlan(cfg, initial)
