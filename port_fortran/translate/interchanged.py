"""The host form of an interchanged nest (``fortran/interchange.py``) or a sunk one
(``fortran/sink.py``: the original column loop, see the end).

On a GPU the interchanged nest is what runs: one kernel over the band that was inside, the
moved loop in every thread, adjacent threads on adjacent elements. On the host backends
that order reads the matrix a row at a time (dgemv 'N': 19x the original on one core,
measured 2026-12-01), so there the kernel runs in chunks of its outer range, each chunk
with the moved loop outside its own contiguous loop again -- the original's order inside
a chunk, one parallel region for the whole nest instead of one per iteration of the moved
loop. ``pf::host_chunks`` (pf_kokkos_compat.hpp) cuts the range; this module prints the
chunk's loops."""
from __future__ import annotations

from typing import Optional

from ..fortran import ir
from .plan import PKernel
from ..fortran.rewrite import replace_names
from .access import names_in
from .promote import read_once
from .symbols import const_int

IND = "  "


# columns of the moved loop one pass of the chunk's loop takes (unroll-and-jam); 4: dgemv 'N'
# on one core 0.90x gfortran's time (gfortran jams by 2 itself), against 1.6x without
JAM = 4


def jammed(em, moved: ir.Do, pre: list, rest: list) -> Optional[tuple[str, str, list]]:
    """(the moved loop's C++ variable, its upper bound, the chunk loop's body for JAM
    consecutive columns) when the moved loop can be unrolled and jammed into the chunk's
    loop, else None. The body for column ``j + u`` is the original's with ``j + u`` for
    ``j`` and the scalars the moved loop's own statements set spelled as their values
    there (those read nothing the band writes, ``interchange.split``). Each element of the
    band still sees the columns in their order, so every value is computed as before; g++
    does not jam the chunk's lambda itself (gfortran does: its dummies cannot alias)."""
    if moved.step is not None and const_int(moved.step, em.tab) != 1:
        return None
    rest = [s for s in rest if not isinstance(s, ir.Continue)]  # a labelled DO's end: no GOTO here
    if not rest or not all(isinstance(s, ir.Assign) for s in rest):
        return None
    sym = em.tab.get(moved.var)
    if sym is None or sym.ftype.base != "integer":
        return None
    written = {s.target.name for s in rest if isinstance(s.target, ir.Name)}
    if written & (names_in(moved.start) | names_in(moved.end)):
        return None
    for s in pre:  # spelled as its value: only where storing it converts nothing (REAL temp = a DOUBLE value)
        t = em.tab.get(s.target.name)
        if t is None or s.value.ftype is None or (t.ftype.base, t.ftype.kind) != (s.value.ftype.base, s.value.ftype.kind):
            return None
    em.use(moved.var)
    copies = list(rest)
    for u in range(1, JAM):
        table: dict[str, ir.Expr] = {moved.var: ir.BinOp("+", ir.Name(moved.var, ftype=sym.ftype),
                                                         ir.Literal(u, str(u), ftype=sym.ftype), ftype=sym.ftype)}
        for s in pre:
            table[s.target.name] = replace_names(s.value, table)
        copies += [ir.Assign(replace_names(s.target, table) if isinstance(s.target, ir.ArrayRef) else s.target,
                             replace_names(s.value, table), line=s.line) for s in rest]
    return sym.c, em.ex(moved.end, sym.ftype, moved.line), copies


def host_form(em, n: PKernel, ind: int) -> Optional[list[str]]:
    """The ``pf::host_chunks`` call for an interchanged or sunk band, or None when the
    kernel is neither (or has what only the device form handles: inductions, last-private
    arrays, atomics, a step other than 1)."""
    do = n.band[0] if n.band else None
    if do is None or n.kind not in ("range", "mdrange") or n.inductions or n.last_private or n.atomic:
        return None
    if getattr(do, "host_original", None) is not None:
        return _sunk_host_form(em, n, do.host_original, ind)
    if not getattr(do.info, "interchanged", 0):
        return None
    if any(d.step is not None and const_int(d.step, em.tab) != 1 for d in n.band):
        return None
    inner = [s for s in n.band[-1].body if not isinstance(s, ir.Continue)]
    inner = [getattr(s, "unpromoted", None) or s for s in inner]  # translate/promote.py's registers: device form
    if len(inner) != 1 or not isinstance(inner[0], ir.Do):
        return None
    moved = inner[0]
    k = getattr(moved, "moved_pre", 0)
    pre, rest = moved.body[:k], moved.body[k:]
    t0 = em.tab[do.var].ftype
    lo, hi = em.ex(do.start, t0, do.line), em.ex(do.end, t0, do.line)
    # the innermost loop's invariant reads, loaded once before it (promote.read_once)
    loads, temps = [], []
    if len(n.band) > 1:  # (a band of one runs its chunk innermost, or jammed)
        loads, rest, temps = read_once(n.band[-1].var, n.band[-1].start, n.band[-1].end, rest, em.tab)
    names = list(dict.fromkeys([d.var for d in n.band] + list(n.private) + temps))
    em.lambda_scopes.append(set(names))
    ctx = {"device": True, "loops": [("lambda", do.construct_name)], "atomic": set()}
    lines = em.lambda_locals(names, ind + 1)
    closes: list[str] = []
    depth = ind + 1

    def chunk(d: ir.Do) -> str:
        sym = em.tab[d.var]
        em.use(d.var)
        return f"for ({sym.c} = static_cast<{sym.ctype}>(pf_b); {sym.c} <= pf_e; ++{sym.c}) {{"

    def open_loop(d: ir.Do):
        nonlocal depth
        head, tail, first = em.for_header(d, depth)
        lines.extend(head + first)
        closes.insert(0, tail)
        depth += 1

    jam = jammed(em, moved, pre, rest) if len(n.band) == 1 else None
    if jam is not None:  # JAM columns at a time, then the ones left one at a time
        v, hi_m, copies = jam
        lines.append(IND * depth + f"for ({v} = {em.ex(moved.start, em.tab[moved.var].ftype, moved.line)}; "
                     f"{v} + {JAM - 1} <= {hi_m}; {v} += {JAM}) {{")
        lines.extend(em.body(pre, depth + 1, ctx))
        lines.append(IND * (depth + 1) + chunk(do))
        lines.extend(em.body(copies, depth + 2, ctx))
        lines.append(IND * (depth + 1) + "}")
        lines.append(IND * depth + "}")
        lines.append(IND * depth + f"for (; {v} <= {hi_m}; ++{v}) {{")
        lines.extend(em.body(pre, depth + 1, ctx))
        lines.append(IND * (depth + 1) + chunk(do))
        lines.extend(em.body(rest, depth + 2, ctx))
        lines.append(IND * (depth + 1) + "}")
        lines.append(IND * depth + "}")
    elif len(n.band) == 1:  # for the moved loop { its statements; for this chunk of the band { body } }
        open_loop(moved)
        lines.extend(em.body(pre, depth, ctx))
        lines.append(IND * depth + chunk(do))
        lines.extend(em.body(rest, depth + 1, ctx))
        lines.append(IND * depth + "}")
    else:  # for the chunk { the middle loops { the moved loop { ...; the innermost { body } } } }
        lines.append(IND * depth + chunk(do))
        closes.insert(0, [IND * depth + "}"])
        depth += 1
        for d in n.band[1:-1]:
            open_loop(d)
        open_loop(moved)
        lines.extend(em.body(pre + loads, depth, ctx))
        open_loop(n.band[-1])
        lines.extend(em.body(rest, depth, ctx))
    for tail in closes:
        lines.extend(tail)
    em.lambda_scopes.pop()
    pad = IND * ind
    return ([pad + f"pf::host_chunks({em.kernel_name(n)}, {lo}, {hi}, [=](const long pf_b, const long pf_e) {{"]
            + lines + [pad + "});"])


def _sunk_host_form(em, n: PKernel, orig: ir.Do, ind: int) -> Optional[list[str]]:
    """A sunk band's host form (``fortran/sink.py``): the original column loop in chunks,
    each column's statements in their original order (the column updates contiguous and
    vectorised, as the original ran them)."""
    if orig.step is not None and const_int(orig.step, em.tab) != 1:
        return None
    sym = em.tab[orig.var]
    lo, hi = em.ex(orig.start, sym.ftype, orig.line), em.ex(orig.end, sym.ftype, orig.line)
    # the scalars the original sets, each thread's own (the column loop was parallel with no
    # reduction): its own lowering's temporaries included, not a blocked band's copies
    names = list(dict.fromkeys([s.var for s in ir.walk([orig]) if isinstance(s, ir.Do)] +
                               [s.target.name for s in ir.walk([orig])
                                if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)]))
    em.lambda_scopes.append(set(names))
    ctx = {"device": True, "loops": [("lambda", orig.construct_name)], "atomic": set()}
    lines = em.lambda_locals(names, ind + 1)
    em.use(orig.var)
    lines.append(IND * (ind + 1) + f"for ({sym.c} = static_cast<{sym.ctype}>(pf_b); {sym.c} <= pf_e; ++{sym.c}) {{")
    lines.extend(em.body(orig.body, ind + 2, ctx))
    lines.append(IND * (ind + 1) + "}")
    em.lambda_scopes.pop()
    pad = IND * ind
    return ([pad + f"pf::host_chunks({em.kernel_name(n)}, {lo}, {hi}, [=](const long pf_b, const long pf_e) {{"]
            + lines + [pad + "});"])
