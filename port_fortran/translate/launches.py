"""When a serial loop should not launch the parallel loops inside it (pure).

A loop that is not parallel but holds parallel loops runs on the host and launches them at
every pass (``PLoop``). That pays when the loops inside have real work; it does not when
they are a handful of iterations each: TeaLeaf's ``tea_block_solve`` copied a 4-element
block per grid column (``do k = bottom, top`` with ``top = bottom + jac_block_size - 1``)
between two serial recurrences, so its port launched three kernels per column, 300,000 per
call: 10x the original's time on Kokkos Serial and 130x on OpenMP. Such a loop runs whole in
one single-iteration kernel instead, as the original runs it.

The trip count of each parallel loop inside is found from its bounds with the integer
scalars the serial loop assigns once (``bottom = ki``, ``top = ki + jac_block_size - 1``)
substituted, PARAMETERs known: a constant difference is a constant trip count.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..fortran import affine, ir

#: parallel loops of at most this many iterations do not pay for a launch per pass
SMALL_TRIP = 16


def _single_definitions(body: list[ir.Stmt], env: dict) -> dict[str, dict]:
    """Integer scalars assigned exactly once in ``body`` (at any depth), to an affine
    expression: name -> polynomial."""
    count: dict[str, int] = {}
    value: dict[str, dict] = {}
    for st in ir.walk(body):
        if isinstance(st, ir.Do):
            count[st.var] = count.get(st.var, 0) + 2  # a loop variable takes many values
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name):
            n = st.target.name
            count[n] = count.get(n, 0) + 1
            p = affine.poly_of(st.value, env)
            if p is not None:
                value[n] = p
    return {n: p for n, p in value.items() if count.get(n) == 1}


def _resolve(p: dict, defs: dict[str, dict], depth: int = 4) -> dict:
    for _ in range(depth):
        hit = affine.names(p) & set(defs)
        if not hit:
            break
        for n in hit:
            p = affine.substitute(p, n, defs[n])
    return p


def small_trips(loop: ir.Do, launches: Callable[[ir.Do], bool], env: dict) -> Optional[str]:
    """When every loop inside ``loop`` that ``launches`` says would be a parallel kernel has
    a constant trip count of at most :data:`SMALL_TRIP`: their trip counts in words (for the
    port's note); None when one is larger or unknown (or there is none)."""
    defs = _single_definitions(loop.body, env)
    out: dict[int, int] = {}
    for st in ir.walk(loop.body):
        if not (isinstance(st, ir.Do) and launches(st)):
            continue
        if st.step is not None and not (isinstance(st.step, ir.Literal) and st.step.value in (1, -1)):
            return None
        lo, hi = affine.poly_of(st.start, env), affine.poly_of(st.end, env)
        if lo is None or hi is None:
            return None
        d = _resolve(affine.add(hi, lo, -1), defs)
        if not affine.is_const(d):
            return None
        step = st.step.value if st.step is not None else 1
        trip = max(0, affine.constant(d) * step + 1)
        if trip > SMALL_TRIP:
            return None
        out[st.line] = trip
    if not out:
        return None
    return "the parallel loops inside run " + ", ".join(f"{t} iteration{'s' if t != 1 else ''} (line {ln})"
                                                        for ln, t in out.items())
