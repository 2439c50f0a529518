"""What a hybrid routine keeps in Fortran (translate.hybrid): the loops that stay Fortran
(:func:`find_nests`, with the reason of each), the statements outside its
outlined nests, nests too small to be worth a kernel launch, OpenMP parallel regions
around outlined nests run as serial code; and what an outlined nest writes through calls."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..fortran import ir


@dataclass
class Kept:
    """Something the hybrid routine keeps in Fortran, and why."""

    code: str
    line: int
    message: str


def find_nests(body: list[ir.Stmt], planner) -> tuple[list[ir.Do], list[Kept], int]:
    """(parallel nests to outline, loops kept in Fortran with their reasons, number of nests).
    A loop that is not parallel but holds parallel loops is searched inside (a time loop, a
    convergence loop); one that holds none is a serial nest and stays as it is."""
    found: list[ir.Do] = []
    kept: list[Kept] = []
    count = 0

    def visit(stmts):
        nonlocal count
        for s in stmts:
            if isinstance(s, ir.Do):
                kind, why = planner.parallel_kind(s)
                if kind is not None:
                    found.append(s)
                    count += 1
                    continue
                code = s.info.reasons[0].code if s.info.reasons else "not-parallel"
                if s.line in planner.options.serial_loops:
                    code = "kept-serial"
                if planner.would_launch(s.body):
                    kept.append(Kept(code, s.line, f"DO {s.var} stays a Fortran loop ({why}); the parallel "
                                                   "loops inside it run as Kokkos kernels"))
                    visit(s.body)
                else:
                    count += 1
                    kept.append(Kept(code, s.line, f"DO {s.var} (lines {s.line}-{s.end_line or '?'}) is not "
                                                   f"parallel: {why}{_inner_why(s, planner)}"))
            elif isinstance(s, ir.DoWhile):
                if planner.would_launch(s.body):
                    kept.append(Kept("do-while", s.line, "DO WHILE stays a Fortran loop; the parallel loops inside "
                                                         "it run as Kokkos kernels"))
                    visit(s.body)
                elif any(isinstance(t, ir.Do) for t in ir.walk(s.body)) or planner.stmt_touches_arrays(s):
                    count += 1
                    kept.append(Kept("do-while", s.line, "DO WHILE loop (its trip count is not known in advance)"))
            else:
                visit(ir.children(s))

    visit(body)
    return found, kept, count


def _inner_why(do: ir.Do, planner) -> str:
    """Why the first loop nested in ``do`` cannot run as a kernel either (the outer loop's
    reason alone hides what keeps the nest inside it serial)."""
    for t in ir.walk(do.body):
        if isinstance(t, ir.Do):
            return f"; nor the loop inside it, DO {t.var} (line {t.line}): {planner.parallel_kind(t)[1]}"
    return ""


def kept_statements(kernel: ir.Kernel, outlined: list[ir.Do]) -> list[Kept]:
    """The statements outside the outlined nests that a full port could not take along:
    what the IR does not model (I/O, FORMAT, ENTRY, EQUIVALENCE, SAVE, ...), calls to other
    routines, STOP and jumps."""
    inside = {id(s) for d in outlined for s in ir.walk([d])}
    out = [Kept(u.construct, u.line, _statement_text(u)) for u in kernel.unsupported if id(u) not in inside]
    for s in ir.walk(kernel.body):
        if id(s) in inside:
            continue
        if isinstance(s, ir.CallStmt):
            out.append(Kept("call", s.line, f"CALL {s.name.upper()} stays a Fortran call"))
        elif isinstance(s, ir.Stop):
            out.append(Kept("stop", s.line, "STOP"))
        elif isinstance(s, (ir.Goto, ir.ComputedGoto, ir.ArithmeticIf)):
            out.append(Kept("goto", s.line, "a jump (GO TO / arithmetic IF) stays Fortran control flow"))
        elif isinstance(s, ir.Return) and s is not kernel.body[-1]:
            out.append(Kept("return", s.line, "RETURN stays Fortran control flow"))
    reported = {(k.line, k.code) for k in out}
    for name, v in kernel.locals.items():
        if v.save and v.parameter is None and v.common is None and (v.line, "save-variable") not in reported:
            out.append(Kept("save-variable", v.line, f"{name} keeps its value between calls (SAVE)"))
    return out


def _statement_text(u: ir.Unsupported) -> str:
    """What a kept statement is: its text (one line, shortened), else the front end's reason."""
    text = " ".join(u.text.split())
    if not text:
        return u.reason
    return f"{text[:70]}{'...' if len(text) > 70 else ''} ({u.reason.split(';')[0]})" if u.construct not in (
        "io-in-kernel",) else f"{text[:70]}{'...' if len(text) > 70 else ''}"


SMALL_NEST = 256  # a nest inside another loop with fewer iterations, known at compile time, stays Fortran


def nest_trips(do: ir.Do, env: dict) -> Optional[int]:
    """Iterations of the nest's loops (the chain of loops each alone in its parent), when
    every trip count is a constant; None otherwise."""
    total, loop = 1, do
    while True:
        try:
            lo, hi = ir.evaluate(loop.start, env), ir.evaluate(loop.end, env)
            st = ir.evaluate(loop.step, env) if loop.step is not None else 1
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            return None
        if not all(isinstance(x, int) for x in (lo, hi, st)) or st == 0:
            return None
        total *= max(0, (hi - lo + st) // st)
        body = [s for s in loop.body if not isinstance(s, ir.Continue)]
        if len(body) == 1 and isinstance(body[0], ir.Do):
            loop = body[0]
            continue
        return total


def serialised_regions(lines: list[str], form: str, nests: list, taken: list[tuple[int, int]],
                       seen: set[int]) -> tuple[list, list[Kept]]:
    """An OpenMP parallel region around outlined nests runs as its serial code (each thread
    would launch the kernels): the edits removing its directives (not those already
    replaced: ``taken``, line ranges) and what is kept, for every (nest, owner routine) in
    ``nests``; ``seen`` (region lines done) is updated."""
    from . import fortran_text

    edits, kept = [], []
    taken = list(taken)
    for do, owner in nests:
        region = fortran_text.parallel_region(lines, do.line, form, (owner.line_start, owner.line_end))
        if region is None or region.first in seen:
            continue
        seen.add(region.first)
        for first, last in region.directives:
            if any(a <= first and last <= b for a, b in taken):
                continue  # a nest's own directive, replaced with it
            note = fortran_text.comment(f"port-fortran: OpenMP directive removed (the region of lines {region.first}-"
                                        f"{region.last} launches Kokkos kernels)", form,
                                        fortran_text.indentation(lines, first, form))
            edits.append(fortran_text.Edit(first, last, [note], f"OpenMP directive of line {first}"))
            taken.append((first, last))
        kept.append(Kept("openmp-region-removed", region.first, f"the OpenMP parallel region of lines {region.first}-"
                         f"{region.last} runs as serial code: its nests are Kokkos kernels, its other loops run in "
                         "order"))
    return edits, kept


def elements_passed_out(stmts: list[ir.Stmt], out_args: dict) -> set[str]:
    """Arrays whose element a call passes to a dummy it may write (``CALL EXACT(X, U(1, I))``:
    the callee writes U from that element on)."""
    from ..fortran.accesses import direct_actuals

    return {args[q].name for s in ir.walk(stmts) for name, args, q in direct_actuals(s)
            if isinstance(args[q], ir.ArrayRef) and q in out_args.get(name, ())}
