"""Where a net training starts (:class:`InitialNet`): random from its seed, a net file, or a net
fitted to a linear evaluation (``eval:SPEC[:WEIGHTS]``, :mod:`.evalinit`); and the names of a
training's net files. The training kind (:mod:`evotune.kinds.training`) hands this value, made
from its config, to what sits below it (verification makes the initial net again from it)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...engine.net.network import read_net
from ...errors import ConfigError
from .data import PackedData
from .evalinit import EvalTarget, fit_to_eval, parse_eval_init
from .floatnet import map_text
from .trainer import FloatNet, Progress, TrainSettings

NET_FILE = "net.nnue"
"""A training's net after its last epoch, in its run folder."""
INITIAL_FILE = "initial.nnue"
"""A training's initial net, quantised, in its run folder."""
INIT_RANDOM = "random"
"""``init`` of a training that starts from a random net of its seed."""
INIT_EVAL = "eval:"
"""Prefix of the ``init`` of a training whose initial net is fitted to a linear evaluation
(``eval:SPEC[:WEIGHTS]``, :mod:`evotune.learn.nn.evalinit`)."""
INIT_EPOCHS = 100
"""Epochs of that fit by default."""


@dataclass(frozen=True)
class InitialNet:
    """A training's starting net, as its config names it."""

    init: str
    """'random' (drawn from the seed), a net file, or 'eval:SPEC[:WEIGHTS]'."""
    settings: TrainSettings
    """The training's settings (the net's shape and seed)."""
    epochs: int = INIT_EPOCHS
    """Epochs of an ``eval:`` init's fit to the evaluation's scores."""
    target: EvalTarget | None = field(default=None, compare=False, repr=False)
    """An ``eval:`` init's evaluation and weights, once resolved (:meth:`resolved`); None
    before, and for the other inits."""

    def resolved(self) -> InitialNet:
        """This initial net with an ``eval:`` init's evaluation read once (its spec and
        weights file; ConfigError when it names no linear evaluation), so that what follows
        (its file, its fit) reads nothing again; the other inits as they are."""
        if not self.fits_eval or self.target is not None:
            return self
        return replace(self, target=parse_eval_init(self.init))

    def _target(self) -> EvalTarget:
        return self.target if self.target is not None else parse_eval_init(self.init)

    @property
    def fits_eval(self) -> bool:
        """True when the initial net is fitted to a linear evaluation (``eval:SPEC``)."""
        return self.init.startswith(INIT_EVAL)

    @property
    def random(self) -> bool:
        """True when the initial net is drawn from the seed."""
        return self.init == INIT_RANDOM

    @property
    def file(self) -> Path | None:
        """The file the initial net is read or fitted from (a net file, an ``eval:`` init's
        weights file), None for none."""
        if self.random:
            return None
        if self.fits_eval:
            file = self._target().weights_file
            return None if file is None else Path(file)
        return Path(self.init)

    def check(self) -> None:
        """ConfigError / FieldError when the initial net cannot be made: an ``eval:`` init that
        names no linear evaluation, a net file of another shape or none."""
        if self.fits_eval:
            self._target()
        else:
            self.make()

    def make(self, data: PackedData | None = None, *, workers: int = 1,
             progress: Callable[[Progress], None] | None = None) -> FloatNet:
        """The starting net: random from the seed, a net file's values (of the run's shape:
        hidden size, activation, king and output buckets), or (``eval:SPEC``) the seed's random
        net fitted to that evaluation's scores of ``data``'s positions (``progress``: its
        epochs)."""
        if self.random:
            return self.settings.new_net()
        if self.fits_eval:
            if not isinstance(data, PackedData):
                raise ConfigError(f"--init {self.init}: an initial net fitted to an evaluation "
                                  "needs the positions in memory (not --stream)")
            return fit_to_eval(data, self.settings, self._target(),
                               epochs=self.epochs, workers=workers, progress=progress)
        net = FloatNet.from_net(read_net(self.init))
        self.settings.check_net(net, f"{self.init} ")
        return net


def init_shape(init: str, king_buckets: str | None, output_buckets: int | None
               ) -> tuple[str, int]:
    """The king buckets (as :attr:`TrainSettings.king_buckets`) and output buckets of a
    training: those given, else its initial net file's when it starts from one, else none (1
    and 1). A net file whose buckets differ from those given is refused later, by
    :meth:`InitialNet.make`, naming both."""
    if init != INIT_RANDOM and not init.startswith(INIT_EVAL) and (
            king_buckets is None or output_buckets is None):
        net = read_net(init)
        return (map_text(net.king_buckets) if king_buckets is None else king_buckets,
                net.output_buckets if output_buckets is None else output_buckets)
    return ("1" if king_buckets is None else king_buckets,
            1 if output_buckets is None else output_buckets)
