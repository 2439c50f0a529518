"""Inputs the original accepts: what to try when it returns inf/NaN or fails (pure).

The harness runs the original first on each case (``Harness.run_case``). When its outputs
are not finite where the inputs were (:func:`not_finite`), or it fails by itself (an exit
code or a signal, not a time or memory limit), the inputs are drawn again, at most
``len(ATTEMPTS)`` more times (one more with index arrays), each a fresh seed and, after the
first, index arrays without repeated values (:func:`distinct`), then narrower real value
ranges (:func:`attempts`): a tenth of the range around its centre (overflow through
products and powers), positive away from zero (division by a difference near zero, sqrt
and log of negatives), near one. The port then runs on the inputs the original accepted.
When none is accepted the case says so with a reason code, ``original-not-finite`` or
``original-failed``: the port is not at fault, and the verdict carries the code when
every failing case is of that kind.
"""
from __future__ import annotations

import copy
from typing import Optional

import numpy as np

from ..fortran import ir
from .inputs import Record
from .spec import Spec

NOT_FINITE = "original-not-finite"
ORIGINAL_FAILED = "original-failed"
ORIGINAL_LIMIT = "original-limit"  # the original ran past the case's time or memory limit
SEED_STEP = 15485863  # a prime: the redrawn seeds differ from the cases' own (base + 7919 k)

# (description, how real ranges [lo, hi] change); the first redraw keeps the spec's ranges
ATTEMPTS = (
    ("a new draw", None),
    ("real inputs within a tenth of their range around its centre",
     lambda lo, hi: ((lo + hi) / 2 - (hi - lo) / 20, (lo + hi) / 2 + (hi - lo) / 20)),
    ("real inputs in [0.5, 1.5]", lambda lo, hi: (0.5, 1.5)),
    ("real inputs in [0.95, 1.05]", lambda lo, hi: (0.95, 1.05)),
)


def not_finite(inputs: list[Record], outputs: list[Record]) -> list[str]:
    """Outputs of real or complex type holding an infinity, or a NaN where the input had a
    number (a NaN where the input was NaN is the poison of an element left alone)."""
    bad = []
    for i, o in zip(inputs, outputs):
        if o.data.dtype.kind not in "fc" or not o.data.size:
            continue
        with np.errstate(invalid="ignore"):
            inf = np.isinf(o.data)
            nan = np.isnan(o.data)
            was = np.isnan(i.data) if i.data.shape == o.data.shape else np.ones(o.data.shape, bool)
        if inf.any() or (nan & ~was).any():
            bad.append(o.name)
    for o in outputs[len(inputs):]:  # the function result (poisoned NaN before the call)
        if o.data.dtype.kind in "fc" and np.isinf(o.data).any():
            bad.append(o.name)
    return bad


DISTINCT = "index arrays without repeated values"


def attempts(kernel: ir.Kernel, spec: Spec) -> list[tuple[str, Spec]]:
    """The redraws, in order: (what changed, the spec to draw from). After a new draw, index
    arrays without repeated values where the spec has index arrays that may repeat
    (:func:`distinct`), then the real ranges narrowed."""
    out = []
    for what, how in ATTEMPTS:
        s = spec if how is None else narrowed(kernel, spec, how)
        if s is not None:
            out.append((what, s))
        if how is None:
            d = distinct(spec)
            if d is not None:
                out.append((DISTINCT, d))
    return out


def distinct(spec: Spec) -> Optional[Spec]:
    """``spec`` with every index array drawn without repeated values (a permutation of its
    range where it spans it: an in-place permutation that follows cycles, Nekbone's
    ``swap_ip``, ends the program on a repeated value); None if there is none to change."""
    if not any(a.role == "index" and not a.distinct for a in spec.args.values()):
        return None
    s = copy.deepcopy(spec)
    for a in s.args.values():
        if a.role == "index":
            a.distinct = True
    return s


def narrowed(kernel: ir.Kernel, spec: Spec, how) -> Optional[Spec]:
    """``spec`` with every real input range changed by ``how``; None if there is none."""
    s = copy.deepcopy(spec)
    changed = False
    for a in kernel.args:
        arg = s.args[a.name]
        if a.ftype.base not in ("real", "complex") or arg.intent == "out" or arg.values is not None \
                or arg.role not in ("scalar", "array") or not arg.range:
            continue
        lo, hi = (float(x) for x in arg.range)
        arg.range = [float(x) for x in how(lo, hi)]
        changed = True
    return s if changed else None


def redraw_seed(seed: int, k: int) -> int:
    return (seed + SEED_STEP * k) % (2**31 - 1)
