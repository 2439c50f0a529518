"""The optimizer agent (rules model): search translator variants, keep only a proven win.

Variants (bounded by ``optimizer_variants``), only where they can matter for the kernel:
MDRange tile sizes and iteration order for tightly nested parallel loops, MDRange on/off,
team-policy reductions for inner reductions, register blocking of bands that run an inner loop
(``regblock-4x4``, and ``regblock-8x8`` where a device is timed: a matrix product's operands
reused from registers), per-thread copies for
scattered updates on Kokkos OpenMP whatever the array's size (``scatter-copies``: whether they pay depends on how
the data collides), and on host backends Kokkos' own policies in
place of the compat header's plain host loops (``kokkos-policies``; the host loops ignore
tile sizes, so where every backend is a host one the tile variants use Kokkos' policies). A variant is kept only if it is verified on
every requested backend AND faster than the baseline by more than the measured spread
(records.Timing.spread_s) on at least one backend, and not slower beyond the spread on any;
the pipeline tries every planned rules variant and keeps the winner with the largest speed-up
(:func:`speedup`; an LLM's variants cost tokens, so there the first winner is kept).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

from ..fortran import ir
from ..records import TranslateOptions
from ..translate.blocks import tiles_for
from ..translate.regblock import blockable



HOST_BACKENDS = ("serial", "openmp")


def variants(kernel: ir.Kernel, base: Optional[TranslateOptions], limit: int,
             backends: Optional[list[str]] = None) -> list[tuple[str, TranslateOptions]]:
    """The variants to try, most promising first. ``backends``: the backends the port is
    timed on (None: unknown, as if some were devices)."""
    base = base or TranslateOptions()
    some_host = backends is None or any(b in HOST_BACKENDS for b in backends)
    host_only = backends is not None and all(b in HOST_BACKENDS for b in backends)
    loops = kernel.loops()
    nested = any(d.info.parallel and d.info.tightly_nested_parallel >= 2 for d in loops)
    rank = max((d.info.tightly_nested_parallel for d in loops if d.info.parallel), default=1)
    tiles = tiles_for(rank)
    inner_red = any(d.info.parallel and any(c.info.reductions for c in _inner_loops(d)) for d in loops)
    out: list[tuple[str, TranslateOptions]] = []

    def add(name, **ch):
        if host_only and base.host_loops and ("tile" in ch or "iterate_left" in ch):
            ch["host_loops"] = False  # the host loops ignore tiles and always run the contiguous index innermost
        o = dataclasses.replace(base, **ch, variant=name)
        if o != base:
            out.append((name, o))

    parallel = any(d.info.parallel for d in loops)
    # first: ``limit`` (optimizer_variants, 2 by default) cuts the list, and an LLM chain keeps
    # the first winner; on a compute-bound band (dgemm, all-pairs sums) reusing operands from
    # registers is the win that matters (5x on dgemm's host port)
    if base.register_block is None and any(blockable(d) for d in loops):
        add("regblock-4x4", register_block=(4, 4))
        if not host_only:  # a GPU has the registers for 64 sums: the column-form product 1.6x the 4x4 (H100)
            add("regblock-8x8", register_block=(8, 8))
    if host_only and parallel and base.host_loops:
        add("kokkos-policies", host_loops=False)
    scattered = any(d.info.parallel and d.info.scattered for d in loops)
    if scattered and base.host_loops and base.atomic_scatter and (backends is None or "openmp" in backends):
        add("scatter-copies", scatter_copies=True)  # pf::Scatter's copies whatever the array's size
    if nested:
        if base.mdrange:
            for t in tiles[:2]:
                add(f"tile-{'x'.join(map(str, t))}", tile=t)
            add("iterate-right" if base.iterate_left else "iterate-left", iterate_left=not base.iterate_left)
        add("no-mdrange" if base.mdrange else "mdrange", mdrange=not base.mdrange)
    if inner_red:
        add("team-reductions" if not base.team_reductions else "flat-reductions",
            team_reductions=not base.team_reductions)
    if nested and base.mdrange:
        for t in tiles[2:]:
            add(f"tile-{'x'.join(map(str, t))}", tile=t)
    if some_host and not host_only and parallel and base.host_loops:
        add("kokkos-policies", host_loops=False)
    return out[: max(limit, 0)]


def _inner_loops(d: ir.Do) -> list[ir.Do]:
    return [s for s in ir.walk(d.body) if isinstance(s, ir.Do)]


def kokkos_times(timings: list[dict]) -> dict[str, dict]:
    """The kernel-only timing of each Kokkos backend (a variant changes the kernel, not the
    host-device copies, which on a GPU dominate the with-copies time and its spread); the
    with-copies timing only where a backend has no kernel-only one."""
    out: dict[str, dict] = {}
    for t in timings:
        v = str(t.get("variant", ""))
        if v.startswith("kokkos-") and (v not in out or (t.get("kernel_only", True) and not out[v].get("kernel_only", True))):
            out[v] = t
    return out


def speedup(candidate: list[dict], baseline: list[dict]) -> float:
    """The geometric mean over the Kokkos backends timed in both of baseline / candidate time
    (1.0 when none is common): how the optimizer ranks the variants that win."""
    cand, base = kokkos_times(candidate), kokkos_times(baseline)
    ratios = [float(base[v]["median_s"]) / float(cand[v]["median_s"]) for v in sorted(set(cand) & set(base))
              if float(cand[v]["median_s"]) > 0]
    return math.prod(ratios) ** (1.0 / len(ratios)) if ratios else 1.0


def is_better(candidate: list[dict], baseline: list[dict]) -> tuple[bool, str]:
    """(keep?, why). Compared per Kokkos backend present in both."""
    cand, base = kokkos_times(candidate), kokkos_times(baseline)
    common = sorted(set(cand) & set(base))
    if not common:
        return False, "no comparable timings"
    wins, losses = [], []
    for v in common:
        c, b = cand[v], base[v]
        spread = max(float(c.get("spread_s") or 0), float(b.get("spread_s") or 0))
        gain = float(b["median_s"]) - float(c["median_s"])
        if gain > spread:
            wins.append(f"{v} {b['median_s']:.3e}s -> {c['median_s']:.3e}s")
        elif -gain > spread:
            losses.append(f"{v} slower {b['median_s']:.3e}s -> {c['median_s']:.3e}s")
    if losses:
        return False, "; ".join(losses)
    if wins:
        return True, "; ".join(wins)
    return False, "within the measured spread"
