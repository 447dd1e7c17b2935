"""The only place that creates random generators.

Seeds are addressed by position, never by execution order: the generator for a game comes from
``np.random.SeedSequence(seed, spawn_key=(generation, fixture, pair))``. Results are therefore the
same for 1 and N workers, and for a resumed run and an uninterrupted one.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

# Streams for the different consumers of randomness in a run; part of the spawn key so that
# e.g. the strategy's draws and the openings' draws never share a stream.
STREAM_STRATEGY = 0
STREAM_OPENINGS = 1
STREAM_GAMES = 2
STREAM_VERIFY = 3
STREAM_DATAGEN = 10   # evotune datagen: openings, random plies and samples of game g
STREAM_TEXEL = 11     # evotune texel: the validation split
STREAM_NET_INIT = 12  # evotune nn init: the weights of a random network
STREAM_NN_TRAIN = 13  # net training: initial weights (key 0), epoch e's shuffle (1, e)
STREAM_MOVE_MODEL = 20  # a random move model (tests, the trainer's start: zeros instead)
STREAM_MOVE_TRAIN = 21  # move-model training: the held-out split (key 0), epoch e's order (1, e)


def seed_sequence(seed: int, *key: int) -> np.random.SeedSequence:
    """The SeedSequence for the position ``key`` (a tuple of non-negative ints) under ``seed``."""
    return np.random.SeedSequence(int(seed), spawn_key=tuple(int(k) for k in key))


def generator(seed: int, *key: int) -> np.random.Generator:
    """A fresh PCG64 generator for position ``key`` under ``seed``."""
    return np.random.Generator(np.random.PCG64(seed_sequence(seed, *key)))


def game_seed(seed: int, *key: int) -> int:
    """A 63-bit integer seed for position ``key`` (for code that wants a plain int, e.g. numba)."""
    return int(seed_sequence(seed, *key).generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def library_seed(seed: int, *key: int) -> int:
    """A seed in [1, 2^31 - 2] for position ``key``: what a library that draws from numpy's legacy
    generator (pycma, nevergrad) is seeded with (:func:`library_random_state`)."""
    return int(game_seed(seed, *key) % (2 ** 31 - 2)) + 1


def library_random_state(seed: int) -> np.random.RandomState:
    """numpy's legacy generator seeded with ``seed`` (a :func:`library_seed`): the one a library
    that takes a ``RandomState`` (or draws from ``np.random``) is given."""
    return np.random.RandomState(int(seed))


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    """JSON-safe state of a generator (for the store)."""
    return dict(rng.bit_generator.state)


def restore_generator(state: Mapping[str, Any]) -> np.random.Generator:
    """A generator restored from :func:`generator_state` output."""
    bitgen: np.random.BitGenerator = np.random.PCG64()
    bitgen.state = state
    return np.random.Generator(bitgen)
