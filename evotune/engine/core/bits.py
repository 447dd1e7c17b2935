"""Bit intrinsics for uint64 bitboards (LLVM ctpop / cttz), usable from numba code, and a cache
prefetch hint.

Numba has no popcount; these compile to single instructions where the CPU has them.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
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


@njit(cache=True, inline="always")
def popcount(b):
    """Number of set bits of a uint64, as int64."""
    return np.int64(_ctpop(b))


@njit(cache=True, inline="always")
def lsb(b):
    """Index of the lowest set bit of a non-zero uint64, as int64."""
    return np.int64(_cttz(b))


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to start loading the cache line of ``arr[idx]`` (llvm.prefetch: read, high
    locality); no effect on results. The search uses it for transposition-table entries, whose
    loads miss the caches."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(arr)(context, builder, value=args[0])
        ptr = cgutils.get_item_pointer(context, builder, arr, ary, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, types.int64), codegen
