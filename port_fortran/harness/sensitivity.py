"""The original's own sensitivity to rounding, the floor of the comparison's tolerance.

Run the original again on its inputs perturbed by two units in the last place (random
signs, real and complex inputs only, never intent(out) arrays) and take how far each real
output moved: where a computation is ill-conditioned (a recurrence at high degree, a
difference of near-equal values), a port that rounds differently is as right as the
original, within that movement (``compare.NOISE_FACTOR`` times it, capped by
``compare.NOISE_CAP`` of the element's magnitude). Pure but for the one run it is given.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..fortran import ir
from .inputs import Record, write_records
from .spec import Spec


def sensitivity(kernel: ir.Kernel, spec: Spec, run_original: Callable, recs: list[Record],
                ref_out: list[Record], work: Path, seed: int) -> dict[str, np.ndarray]:
    """{output name: |outputs on perturbed inputs - outputs|}; {} when no real output is
    read or the perturbed run fails. ``run_original(fin)`` returns (result, records or
    None, why unreadable) as ``Harness._run_original``."""
    if not any(o.data.dtype.kind in "fc" and o.data.size for o in ref_out):
        return {}
    rng = np.random.default_rng(seed ^ 0x5EED)
    pert: list[Record] = []
    moved = False
    for r, a in zip(recs, kernel.args):
        if r.data.dtype.kind in "fc" and r.data.size and spec.args[a.name].intent != "out":
            eps = 2 * np.finfo(r.data.real.dtype).eps
            sign = rng.choice(np.array([-1.0, 1.0]), size=r.data.shape)
            with np.errstate(invalid="ignore", over="ignore"):
                data = np.array((r.data * (1 + eps * sign)).astype(r.data.dtype), order="F")
            pert.append(Record(r.name, r.code, r.lbound, data))
            moved = True
        else:
            pert.append(r)
    pert += recs[len(kernel.args):]
    if not moved:
        return {}
    fin = work / "in-perturbed.bin"
    try:
        write_records(fin, pert)
        res, out, bad = run_original(fin)
    finally:
        if fin.exists():
            fin.unlink()
    if not res.ok or out is None or bad:
        return {}
    noise: dict[str, np.ndarray] = {}
    for a, b in zip(ref_out, out):
        if a.data.dtype.kind in "fc" and a.data.shape == b.data.shape and a.data.size:
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                ref = a.data.astype(np.complex128 if a.data.dtype.kind == "c" else np.float64)
                moved = np.abs(b.data - ref)
                # one perturbation samples the noise: an element it happened to leave alone
                # gets the output's typical (75th percentile) relative movement
                rel = np.where(np.abs(ref) > 0, moved / np.abs(ref), 0.0)
                finite = rel[np.isfinite(rel)]
                typical = float(np.percentile(finite, 75)) if finite.size else 0.0
                noise[a.name] = np.maximum(moved, typical * np.abs(ref))
    return noise
