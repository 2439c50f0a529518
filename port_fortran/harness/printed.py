"""What a routine prints is one of its outputs: the standard output of the original's run
of a case against the port's run of the same inputs, line by line and number by number,
with the comparison the program and application proofs use (``textcompare.compare_output``: same
text, numbers within a relative tolerance plus one unit of the last digit printed). A
hybrid port keeps the routine's WRITE and PRINT statements as they are, so a value it
computed wrongly and only printed (a residual, a checksum, a validation line) is caught
here and nowhere else.

Numbers the original reads from a clock (an elapsed time it prints) are not compared:
they are the ones that change when the original runs again with its clocks dilated
(``harness.dilate``), as for outputs read from a clock. Lines of the Kokkos run-time and
of the drivers' timing are not the routine's.

A printed number counts as an effect of the case (against ``original-no-effect``) when it
is not the value of one of the case's scalar inputs: a routine whose only result is a
line it prints (STREAM's ``checksums``) then proves something, while one that only echoes
its arguments in an error message does not."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..records import OutputCheck
from .textcompare import DEFAULT_RTOL, compare_output, timing_mask, tokens

PRINTED = "(printed)"  # the OutputCheck's name: no argument has it (not a Fortran name)
NOISE = (r"^\s*\[?Kokkos", r"^\s*KOKKOS", r"^PF_TIME ")


def printed_rtol(tolerances) -> float:
    """The relative tolerance of printed numbers: the loosest of the routine's outputs (a
    single-precision routine prints single-precision values), at least the application
    proof's."""
    rels = [t.rel for t in tolerances]
    return max([DEFAULT_RTOL, *rels])


def computed_numbers(text: str, recs: list) -> int:
    """How many numbers ``text`` prints that are not the value of a scalar input of the
    case (within the digits printed)."""
    scalars = []
    for r in recs:
        a = np.asarray(r.data)
        if a.size == 1 and a.dtype.kind in "iufb":
            scalars.append(float(a.reshape(-1)[0]))
    n = 0
    for line in (text or "").splitlines():
        for t in tokens(line):
            if t.value is None:
                continue
            if not any(abs(t.value - s) <= max(t.unit, 1e-12 * abs(s)) for s in scalars):
                n += 1
    return n


def check_printed(ref: str, new: str, rtol: float, clocked: Optional[str] = None) -> Optional[OutputCheck]:
    """The port's printed output against the original's (None when neither printed
    anything). ``clocked``: the original's output of a run with dilated clocks; the numbers
    that differ there are left out."""
    if not (ref or "").strip() and not (new or "").strip():
        return None
    mask = timing_mask(ref, clocked, NOISE, rtol) if clocked is not None else frozenset()
    cmp = compare_output(ref or "", new or "", NOISE, rtol, 0.0, mask)
    oc = OutputCheck(PRINTED, cmp.matched, cmp.numbers_compared, max_rel_err=cmp.max_rel_err, tolerance=rtol)
    if mask:
        oc.message = f"{len(mask)} printed number(s) read from a clock not compared"
    if not cmp.matched:
        fd = cmp.first_difference or {}
        oc.message = (f"the printed output differs at line {fd.get('line_ref') or fd.get('line_new')}: the original "
                      f"printed {fd.get('ref', '')!r}, the port {fd.get('new', '')!r} ({fd.get('why', '')})")
    return oc
