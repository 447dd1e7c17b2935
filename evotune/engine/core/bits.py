"""Bit intrinsics for uint64 bitboards (LLVM ctpop / cttz / ctlz), usable from numba code.

Numba has no popcount; these compile to single instructions where the CPU has them.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

ZERO = np.uint64(0)
ONE = np.uint64(1)


@intrinsic
def _ctpop(typingctx, x):
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def _cttz(typingctx, x):
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, True))

    return sig, codegen


@intrinsic
def _ctlz(typingctx, x):
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], context.get_constant(types.boolean, True))

    return sig, codegen


@njit(cache=True, inline="always")
def popcount(b):
    """Number of set bits of a uint64, as int64."""
    return np.int64(_ctpop(b))


@njit(cache=True, inline="always")
def lsb(b):
    """Index of the lowest set bit of a non-zero uint64, as int64."""
    return np.int64(_cttz(b))


@njit(cache=True, inline="always")
def msb(b):
    """Index of the highest set bit of a non-zero uint64, as int64."""
    return np.int64(63) - np.int64(_ctlz(b))
