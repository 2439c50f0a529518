"""Which 1-D kernels the host runs with their iterations as SIMD lanes (``pf::parallel_for_simd``).

The all-pairs form -- ``do i; sx = 0; do j; dx = x(j) - x(i); ...; sx = sx + dx * r; end do;
ax(i) = sx`` -- carries a floating-point sum through its inner loop. g++ vectorises that
inner loop and then adds each sum's lanes one after the other, in the loop's order (it may
not reassociate): nbody's port took 2.06x gfortran's time on one core (2026-12-06), and
gfortran's own build vectorises the *outer* loop instead, eight ``i`` at once, each lane
summing its own ``sx`` in order. ``#pragma omp simd`` on the host loop over ``i`` asks g++
for the same (with the kernel's arrays unmanaged views, ``pf::KView``, so the closure's
fields are registers).

Legal because the kernel is a parallel_for: its iterations are independent and each lane
computes its element exactly as the scalar loop would. Chosen only where it pays and cannot
go wrong in lockstep:

- a 1-D range kernel with no atomics, scatter, last-private hand-on, induction variables or
  private arrays (a private array is one buffer per thread, which lanes would share);
- only assignments, IFs and DO loops, calling no function but intrinsics;
- an inner DO carrying a real or complex scalar private to the iteration (``s = s + ...``),
  its bounds the same for every lane (not CSR rows, ``do k = ia(i), ia(i + 1) - 1``);
- every array reference has the kernel's variable, if at all, only in its first subscript
  and there as ``i + c`` (lanes on adjacent elements, or all on the same one): no gathers.

g++ vectorises the outer loop only where the inner loop has no zero-trip guard inside it
("control flow in loop"; gfortran moves that test out of the loop itself): on the host the
kernel is versioned (:func:`versioned`) -- when every inner loop at the top of the body runs
(``lo <= hi``, the same for every iteration), the lanes' version with those loops
bottom-tested (``j = lo; do { ... } while ((++j) <= hi);``); else the plain kernel. A device
build has the plain kernel only.

Pure: reads the plan node and the symbol table; :func:`versioned` edits the emitted lines.
"""
from __future__ import annotations

import re
from typing import Optional

from ..fortran import affine
from ..fortran import ir
from .access import names_in, own_exprs


def _carried(loop: ir.Do, private: set[str], tab) -> bool:
    """``loop`` assigns a real/complex private scalar from an expression reading it."""
    for s in ir.walk(loop.body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name in private:
            sym = tab.get(s.target.name)
            if sym is not None and sym.ftype.base in ("real", "complex") \
                    and s.target.name in names_in(s.value):
                return True
    return False


def _lane_ref(ref: ir.ArrayRef, var: str, private: set[str]) -> bool:
    for k, sub in enumerate(ref.subscripts):
        names = names_in(sub)
        if names & private:
            return False  # an index computed in the iteration: a gather
        if var not in names:
            continue
        if k != 0:
            return False
        p = affine.poly_of(sub)
        if p is None:
            return False
        c, _rest = affine.split(p, var)
        if c != {(): 1}:
            return False
    return True


def fits(n, tab) -> bool:
    """Whether plan node ``n`` runs as SIMD lanes on the host (see the module docstring)."""
    if n.kind != "range" or not n.band or n.atomic or n.last_private or n.inductions or n.scratch_boxes:
        return False
    do = n.band[0]
    private = set(n.private)
    for name in private:
        sym = tab.get(name)
        if sym is None or sym.is_array:
            return False
    inner_vars = set()
    carried = False
    for s in ir.walk(do.body):
        if not isinstance(s, (ir.Assign, ir.If, ir.Do, ir.Continue)):
            return False
        if isinstance(s, ir.Do):
            if (do.var in names_in(s.start) | names_in(s.end)) or any(
                    names_in(x) & private for x in own_exprs(s)):
                return False  # lanes would run different trip counts (CSR rows)
            inner_vars.add(s.var)
            carried = carried or _carried(s, private, tab)
        exprs = list(own_exprs(s)) + ([s.target] if isinstance(s, ir.Assign) else [])
        for e in exprs:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic:
                    return False
                if isinstance(x, ir.ArrayRef) and not _lane_ref(x, do.var, private - inner_vars):
                    return False
    return carried


# the sequential loops emit.for_header writes for a constant step
_FOR = re.compile(r"^(?P<ind>\s*)for \((?P<v>\w+) = (?P<lo>.+); (?P=v) (?P<cmp><=|>=) (?P<hi>.+); "
                  r"(?P<step>\+\+(?P=v)|(?P=v) [-+]= \d+)\) \{$")


def versioned(kern: list[str], pad: str, ind: str = "  ") -> Optional[list[str]]:
    """The host's two versions of the emitted kernel ``kern`` (launch line, lambda body,
    closing line; the launch at ``pad``), or None when its body has no constant-step loop at
    its top level to run bottom-tested."""
    body_pad = pad + ind
    body, out, runs = kern[1:-1], [], []
    k = 0
    while k < len(body):
        m = _FOR.match(body[k])
        if m is None or m.group("ind") != body_pad:
            out.append(body[k])
            k += 1
            continue
        end = next((e for e in range(k + 1, len(body)) if body[e] == body_pad + "}"), None)
        if end is None:
            return None
        v, lo, hi, cmp, step = m.group("v"), m.group("lo"), m.group("hi"), m.group("cmp"), m.group("step")
        out += [f"{body_pad}{v} = {lo};", f"{body_pad}do {{"] + body[k + 1:end] \
            + [f"{body_pad}}} while (({step}) {cmp} {hi});"]
        runs.append(f"({lo}) {cmp} ({hi})")
        k = end + 1
    if not runs:
        return None
    lanes = [kern[0].replace("::parallel_for(", "::parallel_for_simd(", 1)] + out + [kern[-1]]
    return (["#ifdef PF_HOST_LOOPS",
             f"{pad}if ({' && '.join(runs)}) {{  // its inner loops run: its iterations as SIMD lanes (outer_simd.py)"]
            + [ind + x for x in lanes] + [f"{pad}}} else {{", "#endif"] + kern
            + ["#ifdef PF_HOST_LOOPS", f"{pad}}}", "#endif"])
