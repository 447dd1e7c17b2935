"""The ``evotune nn`` group: network commands (train)."""
from __future__ import annotations

import click

from .nntrain import train


@click.group()
def nn() -> None:
    """Networks: train a net on labelled positions."""


nn.add_command(train)

COMMANDS = (nn,)
