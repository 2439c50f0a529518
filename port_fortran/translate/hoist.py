"""Loop bounds and branch conditions that read arrays, computed before the nest or the
branch (pure IR -> IR).

A parallel loop's policy is built on the host (``pf::range(1, grid_points(3) - 2)``), where
the Views of a GPU backend cannot be read: NPB's ``do k = 1, grid_points(3) - 2`` read a
device View from the host and the CUDA run failed. Each such bound of a loop at the host
level of the routine (its top-level statements, the branches of IFs there, the bodies of
loops there that do not run as kernels) becomes
a temporary assigned just before the loop, ``pf_b1 = grid_points(3) - 2``: Fortran
evaluates a DO's bounds once, on entry, so the value is the same. The planner puts the
assignment in a single-iteration kernel and copies the scalar back to the host
(``pf::DevScalar``), as for any scalar computed from arrays.

The bounds of loops perfectly nested in such a loop (a band the policy collapses) are
hoisted too when they are the same on every entry: they use none of the enclosing loops'
variables and nothing the nest assigns."""
from __future__ import annotations

from ..fortran import ir
from .access import names_changed
from .symbols import SymbolTable


def hoist_array_bounds(body: list[ir.Stmt], tab: SymbolTable, serial=None) -> list[ir.Stmt]:
    """``serial(do)``: True when the planner will not run ``do`` as a kernel (a host loop
    around kernels, or serial code): its body is at the host level too (a time loop in a
    routine). None: only the top level and its IFs."""
    out: list[ir.Stmt] = []
    for s in body:
        if isinstance(s, ir.Do):
            pre = _hoist_nest(s, tab)
            if pre and s.label is not None:  # a jump to the DO runs its bounds' assignments first
                pre[0].label, s.label = s.label, None
            out += pre
            if serial is not None and serial(s):
                s.body = hoist_array_bounds(s.body, tab, serial)
        elif isinstance(s, ir.If):
            s.branches = [(c, hoist_array_bounds(b, tab, serial)) for c, b in s.branches]
            s.else_body = hoist_array_bounds(s.else_body, tab, serial)
            out += _hoist_condition(s, tab)
        out.append(s)
    return out


def _hoist_condition(s: ir.If, tab: SymbolTable) -> list[ir.Stmt]:
    """A branch on array elements around loops (CloverLeaf's halo faces: ``if
    (fields(FIELD_DENSITY0) == 1)``, ``if (chunk_neighbours(CHUNK_LEFT) == EXTERNAL_FACE)``)
    read its condition on the device, so the whole branch, loops included, ran in one
    single-iteration kernel. The condition becomes a logical temporary assigned just before
    the IF (computed on the device, copied back like a hoisted bound), and the host takes
    the branch and launches its loops. Only an IF with one condition (and an ELSE): in an
    ELSE IF chain a later condition is evaluated only when the earlier ones fail, and may
    read out of bounds where they hold."""
    if len(s.branches) != 1:
        return []
    cond = s.branches[0][0]
    if not _reads_arrays(cond, tab) or _calls_routines(cond):
        return []
    if not any(isinstance(x, ir.Do) for x in ir.walk(s.branches[0][1] + s.else_body)):
        return []  # a branch of scalar work stays where it is
    t = tab.new_temp("c", ir.LOGICAL)
    pre = ir.Assign(ir.Name(t.name, ftype=ir.LOGICAL), cond, line=s.line)
    if s.label is not None:  # a jump to the IF evaluates its condition first
        pre.label, s.label = s.label, None
    s.branches = [(ir.Name(t.name, ftype=ir.LOGICAL), s.branches[0][1])]
    return [pre]


def _reads_arrays(e: ir.Expr, tab: SymbolTable) -> bool:
    return any(isinstance(x, (ir.Name, ir.ArrayRef)) and tab.is_array(x.name) for x in ir.walk_expr(e))


def _calls_routines(e: ir.Expr) -> bool:
    """Does ``e`` call a function of the program (not an intrinsic)? Then it is left in place."""
    return any(isinstance(x, ir.FuncCall) and not x.intrinsic and x.name != "size" for x in ir.walk_expr(e))


def _hoist_nest(do: ir.Do, tab: SymbolTable) -> list[ir.Stmt]:
    """The assignments of ``do``'s hoisted bounds (its own, then its perfectly nested
    loops' that are the same on every entry); the loops now read the temporaries."""
    pre: list[ir.Stmt] = []
    changed = None
    loop = do
    while True:
        for attr in ("start", "end", "step"):
            e = getattr(loop, attr)
            if e is None or not _reads_arrays(e, tab) or _calls_routines(e):
                continue
            if loop is not do:
                changed = names_changed([do]) if changed is None else changed
                if any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name in changed for x in ir.walk_expr(e)):
                    continue  # it may differ between entries
            ftype = e.ftype or ir.INTEGER
            t = tab.new_temp("b", ftype)
            pre.append(ir.Assign(ir.Name(t.name, ftype=ftype), e, line=loop.line))
            setattr(loop, attr, ir.Name(t.name, ftype=ftype))
        inner = [x for x in loop.body if not isinstance(x, ir.Continue)]
        if len(inner) != 1 or not isinstance(inner[0], ir.Do):
            return pre
        loop = inner[0]
