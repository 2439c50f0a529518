"""What a statement surely writes of an array, as boxes (per dimension a (lower, upper)
pair of affine polynomials): the loop nests, array assignments and calls whose writes the
privatisation test (``privatize.py``) and the callees' effects (``effects.py``) count as
must-writes. Every function under-approximates: a write it cannot bound gives no box."""
from __future__ import annotations

from typing import Optional

from . import affine, ir
from .lastvalue import names_in
from .reductions import mentions


def dummy_fill_boxes(k: ir.Kernel, name: str, env: dict) -> list:
    """The parts of array ``name`` (a dummy of ``k`` it never reads) that ``k`` surely
    assigns: the boxes of its top-level nests and of single element assignments, up to the
    first statement that may leave early, their bounds in names ``k`` never changes."""
    walked = list(ir.walk(k.body))
    changed = assigned_names(walked)
    once = set_once(k.body, changed)
    known: dict = {}
    boxes: list = []
    for st in k.body:
        if isinstance(st, ir.Do):
            boxes += [[tuple(known_poly(p, known) for p in d) for d in b] for b in fill_boxes(st, name, env)]
        elif isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
            polys = [affine.poly_of(x, env) if not isinstance(x, ir.Slice) else None for x in st.target.subscripts]
            if all(p is not None and not any(len(t) > 1 for t in p) for p in polys):
                boxes.append([(known_poly(p, known),) * 2 for p in polys])
        elif isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name in once:
            p = affine.poly_of(st.value, env)
            if p is not None and not affine.names(p) & changed and not any(len(t) > 1 for t in p):
                known[st.target.name] = p
        if any(isinstance(x, CUT) for x in ir.walk([st])):
            break
    return [b for b in merge_boxes(boxes)
            if not any((affine.names(lo) | affine.names(hi)) & changed for lo, hi in b)]


def set_once(body: list[ir.Stmt], changed: set) -> set:
    """Scalars assigned once, by a statement at the top of ``body``, from names nothing in
    it changes (NPB's lhsinit: ``i = size``): the same value wherever it is read after."""
    walked = list(ir.walk(body))
    counts: dict = {}
    for st in walked:
        n = st.target.name if isinstance(st, ir.Assign) else st.var if isinstance(st, ir.Do) else None
        counts[n] = counts.get(n, 0) + 1
    return {st.target.name for st in body if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name)
            and counts.get(st.target.name) == 1 and not names_in([st.value]) & changed
            and not any(isinstance(x, ir.FuncCall) and not x.intrinsic for x in ir.walk_expr(st.value))}


def known_poly(p, known: dict):
    """``p`` with the scalars set once from unchanged names replaced by their values."""
    for n in affine.names(p) & set(known):
        p = affine.substitute(p, n, known[n])
    return p


def constant_bounds(dims: list[ir.Dim], env: dict):
    """[(lower, upper)] of each dimension when named constants fix them all, else None."""
    bounds = []
    for d in dims:
        try:
            lo = ir.evaluate(d.lower, env) if d.lower is not None else 1
            hi = ir.evaluate(d.upper, env) if d.upper is not None else None
        except (KeyError, ValueError, TypeError, ZeroDivisionError):
            return None
        if not isinstance(lo, int) or not isinstance(hi, int) or hi < lo:
            return None
        bounds.append((lo, hi))
    return bounds


def passes(st: ir.Stmt, name: str) -> bool:
    """Is ``st`` a CALL with the array ``name`` (or one of its elements) among its arguments?"""
    return isinstance(st, ir.CallStmt) and any(isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name
                                               for a in st.args)


def reads(st: ir.Stmt, name: str) -> bool:
    """Does the statement itself (not the statements it holds) read the array ``name``?"""
    exprs = list(ir.stmt_exprs(st))
    if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
        exprs = [st.value] + list(st.target.subscripts)  # the target element is written, its subscripts read
    if passes(st, name):
        return True  # the callee may read it
    for e in exprs:
        for x in ir.walk_expr(e):
            if isinstance(x, (ir.ArrayRef, ir.Name)) and getattr(x, "name", None) == name:
                return True
    return False


def section_box(st: ir.Stmt, name: str, bounds: list, env: dict) -> Optional[list]:
    """The box an array assignment ``name = ...`` or ``name(l:u, :, j) = ...`` writes (a
    ``:`` runs over the declared ``bounds``), its value and subscripts not reading ``name``;
    None for any other statement, a strided section, or bounds not affine."""
    if not isinstance(st, ir.Assign) or getattr(st.target, "name", None) != name or bounds is None:
        return None
    if isinstance(st.target, ir.Name):
        subs: list = [ir.Slice()] * len(bounds)
    elif isinstance(st.target, ir.ArrayRef) and len(st.target.subscripts) == len(bounds) \
            and any(isinstance(x, ir.Slice) for x in st.target.subscripts):
        subs = list(st.target.subscripts)
    else:
        return None
    if mentions(st.value, name) or any(mentions(x, name) for x in subs if not isinstance(x, ir.Slice)):
        return None
    box = []
    for sub, (dlo, dhi) in zip(subs, bounds):
        if isinstance(sub, ir.Slice):
            if sub.step is not None:
                return None
            lo = affine.poly_of(sub.lower, env) if sub.lower is not None else affine.const(dlo)
            hi = affine.poly_of(sub.upper, env) if sub.upper is not None else affine.const(dhi)
        else:
            lo = hi = affine.poly_of(sub, env)
        if lo is None or hi is None or any(len(t) > 1 for t in list(lo) + list(hi)):
            return None
        box.append((lo, hi))
    return box


def element_count(bounds: list) -> int:
    """Elements of an array of constant (lower, upper) bounds."""
    n = 1
    for lo, hi in bounds:
        n *= hi - lo + 1
    return n


def fill_boxes(do: ir.Do, name: str, env: dict) -> list:
    """The parts of ``name`` a nest surely assigns, as boxes: per dimension a (lower, upper)
    pair of polynomials. Nothing in the nest cuts an iteration short or reads ``name``; each
    unconditional assignment to ``name`` at the top of the body of one of its loops (at any
    depth, several loops side by side: a block zeroed by the inner loop and its diagonal set
    beside it, ``a(m, n) = 0`` for every ``m`` then ``a(n, n) = 1``) gives a box when the
    loops around it have unit steps and bounds free of the nest's variables and of anything
    the nest changes, and each subscript is one of those loops' variables (its loop's range)
    or an expression free of them that the nest does not change (one element). A loop whose
    variable a box does not use must run at least once (constant bounds) for the box to
    count. A write in a branch, or under a loop that is not of that form, gives no box:
    must-writes only grow without it. Empty when none."""
    nest = list(ir.walk([do]))
    if any(reads(st, name) for st in nest) or any(isinstance(st, CUT) for st in nest):
        return []
    changed = assigned_names(nest)
    boxes: list = []

    def gather(loop: ir.Do, chain: list):
        if not unit_step(loop):
            return
        lo, hi = affine.poly_of(loop.start, env), affine.poly_of(loop.end, env)
        if lo is None or hi is None or any(len(t) > 1 for t in list(lo) + list(hi)) \
                or (affine.names(lo) | affine.names(hi)) & changed:
            return
        chain = chain + [(loop.var, lo, hi)]
        for st in loop.body:
            if isinstance(st, ir.Do):
                gather(st, chain)
            elif isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
                box = box_of(st.target, chain, changed, env)
                if box is not None:
                    boxes.append(box)

    gather(do, [])
    return boxes


def box_of(target: ir.ArrayRef, chain: list, changed: set, env: dict) -> Optional[list]:
    """The box an assignment to ``target`` inside the loops ``chain`` ((variable, lower,
    upper) polynomials) fills, or None (see :func:`fill_boxes`)."""
    range_of = {v: (lo, hi) for v, lo, hi in chain}
    box, used = [], set()
    for sub in target.subscripts:
        if isinstance(sub, ir.Name) and sub.name in range_of and sub.name not in used:
            used.add(sub.name)
            box.append(range_of[sub.name])
            continue
        p = affine.poly_of(sub, env) if not isinstance(sub, ir.Slice) else None
        if p is None or any(len(t) > 1 for t in p) or affine.names(p) & (set(range_of) | changed):
            return None
        box.append((p, p))
    if any(v not in used and not runs(lo, hi) for v, lo, hi in chain):
        return None
    return box


CUT = (ir.Cycle, ir.Exit, ir.Goto, ir.Return, ir.Stop)


def fill_chain(do: ir.Do, name: str):
    """(loops, body, targets): the loops from ``do`` down to the first body that assigns
    elements of ``name`` (each level holding one loop, beside other statements), that body
    and those assignments; None when a level holds no loop or several."""
    loops, loop = [], do
    while True:
        loops.append(loop)
        body = [st for st in loop.body if not isinstance(st, ir.Continue)]
        targets = [st for st in body if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef)
                   and st.target.name == name]
        if targets:
            return loops, body, targets
        inner = [st for st in body if isinstance(st, ir.Do)]
        if len(inner) != 1:
            return None
        loop = inner[0]


def unit_step(do: ir.Do) -> bool:
    return do.step is None or (isinstance(do.step, ir.Literal) and do.step.value == 1)


def runs(lo, hi) -> bool:
    return affine.is_const(lo) and affine.is_const(hi) and affine.constant(hi) >= affine.constant(lo)


def assigned_names(stmts, sites=None) -> set:
    """Scalars the statements may change: assigned, DO variables, passed to a call (to a
    dummy the callee may write, when ``sites`` knows the callee)."""
    out = set()
    for st in stmts:
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name):
            out.add(st.target.name)
        elif isinstance(st, ir.Do):
            out.add(st.var)
        elif isinstance(st, ir.CallStmt):
            written = sites.written(st.name, len(st.args)) if sites is not None else None
            out |= {a.name for q, a in enumerate(st.args) if isinstance(a, ir.Name)
                    and (written is None or q in written)}
    return out


def merge_boxes(boxes: list) -> list:
    """The same elements (or more of those the boxes cover, never others) in fewer boxes:
    two boxes equal in every dimension but one, where one's range ends just before the
    other's starts, are one box. Sound whatever the ranges: [a, b] and [b + 1, c] together
    hold every element of [a, c]."""
    out = [list(b) for b in boxes]
    merged = True
    while merged:
        merged = False
        for x in range(len(out)):
            for y in range(len(out)):
                if x == y or len(out[x]) != len(out[y]):
                    continue
                diff = [d for d, (p, q) in enumerate(zip(out[x], out[y])) if p != q]
                if len(diff) == 1:
                    d = diff[0]
                    (alo, ahi), (blo, bhi) = out[x][d], out[y][d]
                    if affine.add(ahi, affine.const(1)) == blo:
                        out[x][d] = (alo, bhi)
                        del out[y]
                        merged = True
                        break
                elif not diff:
                    del out[y]
                    merged = True
                    break
            if merged:
                break
    return out
