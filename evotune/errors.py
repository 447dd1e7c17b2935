"""Error types. Every library error is an EvotuneError that says what was wrong and how to fix it.

The CLI prints ``str(error)`` on one line and exits with status 2; it never shows a traceback
for these.
"""
from __future__ import annotations


class EvotuneError(Exception):
    """Base class of every error evotune raises on purpose."""


class ConfigError(EvotuneError, ValueError):
    """A configuration value, flag or file is invalid (the message names it and gives a fix)."""


class FieldError(ConfigError):
    """A setting's value is invalid. The library names the setting by its field (``depth``,
    ``max_plies``); the CLI says it as the flag that set it (``--depth``, ``--max-plies``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field} {problem}")
        self.field = field
        """The field of the settings record (e.g. 'max_plies')."""
        self.problem = problem
        """What is wrong and how to fix it, without the field's name."""


class PositionError(EvotuneError, ValueError):
    """A FEN or a position is malformed or illegal."""


class WeightsError(EvotuneError, ValueError):
    """A weight vector has the wrong length, is not finite, or is out of its bounds."""


class NetError(ConfigError):
    """A network file is missing, damaged, truncated or does not match what was asked of it, or a
    network's arrays are malformed (the message names the file or the field)."""


class MoveModelError(ConfigError):
    """A move-model file is missing, damaged or truncated, or a model's weights are malformed
    (the message names the file or the field)."""


class EngineError(EvotuneError, RuntimeError):
    """An engine could not be started or did not behave (external UCI engines, engine specs)."""


class OpeningsError(EvotuneError, ValueError):
    """An opening suite or book cannot be read or holds no usable opening."""


class StoreError(EvotuneError, RuntimeError):
    """A run directory is missing, corrupt, or does not match the configuration given."""


class ClusterError(EvotuneError, RuntimeError):
    """A Dask scheduler cannot be reached, has no workers, or lost the games it was given."""


class Interrupted(EvotuneError):
    """The user stopped a command (Ctrl-C): not an error. The message says what is kept and how
    to continue; the CLI prints it on one line and exits with status 130."""
