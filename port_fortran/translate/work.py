"""The work of one iteration of a kernel, as the host backends weigh it (pure over the IR).

On Kokkos OpenMP a kernel opens a parallel region: microseconds of waking and joining the
team, more than the whole of a small kernel (a halo row of a few thousand elements). The
compat header runs a kernel whose iterations times this work is below a threshold on the
calling thread (``pf::Label``, ``pf::host_small`` in pf_kokkos_compat.hpp). The measure is
what such kernels spend their time on: the array elements an iteration reads and writes
(and an intrinsic call counts as one more). It is only known for straight-line bodies:
assignments, IF and SELECT CASE blocks of them. A body with a loop, a call of a routine or a
function of the program, array syntax (a section, a whole array) or a statement the IR does
not model has a work that depends on what it runs: 0, unknown, and the kernel is shared among
the threads as before."""
from __future__ import annotations

from typing import Callable

from ..fortran import ir

_STRAIGHT = (ir.Assign, ir.If, ir.SelectCase, ir.Continue, ir.Cycle)


def iteration_work(body: list[ir.Stmt], is_array: Callable[[str], bool]) -> int:
    """Array element references and intrinsic calls of one iteration of ``body`` (at least
    1); 0 when the body's work is not a fixed count (see the module's docstring).
    ``is_array(name)``: whether a bare name is a whole array."""
    work = 0
    for s in ir.walk(body):
        if not isinstance(s, _STRAIGHT):
            return 0
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Slice):
                    return 0
                if isinstance(x, ir.ArrayRef):
                    work += 1
                elif isinstance(x, ir.Name) and is_array(x.name):
                    return 0
                elif isinstance(x, ir.FuncCall):
                    if not x.intrinsic:
                        return 0
                    work += 1
    return max(1, work)


def launch_label(em, n, body: list[ir.Stmt]) -> str:
    """The label of emitter ``em``'s pf:: launch of kernel ``n`` with the work of one
    iteration of ``body`` where it is known (``pf::Label``); the plain label otherwise, and
    for Kokkos' own launches (the options' host_loops off)."""
    work = iteration_work(body, em.tab.is_array) if em.ns == "pf" else 0
    return f"pf::Label({em.kernel_name(n)}, {work})" if work else em.kernel_name(n)
