"""Array privatisation for the dependence test: a local scratch array that every iteration
of a loop fills before reading it -- over its whole extent, or over a part that every later
read of the iteration stays in (NPB MG's line buffers ``r1(i1)``, filled for ``i1 = 1, n1``
and read at ``i1 - 1`` and ``i1 + 1`` for ``i1 = 2, n1 - 1``) -- and that nothing outside the
loop reads, is private to the iteration (a copy per iteration, ``pf::Private`` in the port)
instead of a dependence between iterations."""
from __future__ import annotations

import re
from typing import Optional

from . import affine, ir
from .fills import (CUT, assigned_names, constant_bounds, element_count, fill_boxes, fill_chain, merge_boxes,
                    passes, reads, section_box, set_once, unit_step)
from .reductions import mentions
from .sweeps import forget as _forget, recurrence_box as _recurrence_box


PRIVATE_ARRAY_ELEMENTS = 4096  # a private copy lives in each iteration (registers, the GPU thread's stack)


def privatizable_array(name: str, loop: ir.Do, kernel: ir.Kernel, env: dict, sites=None) -> bool:
    """Can each iteration of ``loop`` have its own copy of the array ``name``? It is a local
    of the routine (no dummy, COMMON, module, host or SAVEd storage) of constant extents, no
    larger than PRIVATE_ARRAY_ELEMENTS; in the iteration it is read only after a loop nest
    wrote all of it (each dimension's whole extent, unconditionally) or a call filled it (a
    callee that assigns all of its dummy first, ``sites``: accesses.CallSites); and nothing
    outside the loop reads it."""
    v = kernel.locals.get(name)
    if v is None or not v.dims or v.save or v.common is not None or v.parameter is not None or v.allocatable \
            or any(name in cls for cls in kernel.equivalences) or hosted(kernel, name):
        return False
    bounds = constant_bounds(v.dims, env)
    if bounds is None or element_count(bounds) > PRIVATE_ARRAY_ELEMENTS:
        return False
    fills = None
    if sites is not None:
        size = element_count(bounds)
        fills = lambda st: _call_fills(st, name, bounds, size, sites)  # noqa: E731
    if not _dead_outside(name, loop, kernel, bounds, env, fills, sites):
        return False
    return _scan_kills(loop.body, name, bounds, env, fills, sites) != "unsafe"


def _dead_outside(name: str, loop: ir.Do, kernel: ir.Kernel, bounds: list, env: dict, fills, sites) -> bool:
    """Does no statement outside ``loop`` read a value of ``name`` the loop wrote? Each read
    outside it lies in another loop (not around ``loop``) whose every iteration writes the
    elements it reads first -- the same scratch array reused by a later nest (TeaLeaf's block
    solve: the blocks of 4 rows, then the rows left over)."""
    inside = {id(x) for x in ir.walk([loop])}
    parents: dict = {}

    def index(stmts: list[ir.Stmt], chain: list) -> None:
        for s in stmts:
            parents[id(s)] = chain
            inner = chain + [s] if isinstance(s, ir.Do) else chain
            for b in ([s.body] if isinstance(s, (ir.Do, ir.DoWhile)) else _bodies(s)):
                index(b, inner)

    index(kernel.body, [])
    outside = [st for st in ir.walk(kernel.body) if id(st) not in inside and reads(st, name)
               and not (isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name == name
                        and not mentions(st.value, name))]  # dp_l = 0: writes all of it, reads nothing
    if not outside:
        return True
    if unmodelled_reader(name, loop, kernel):
        return False  # a statement the IR does not model may read it (a WRITE of it)
    covered: dict = {}
    for st in outside:
        ok = False
        for anc in reversed(parents.get(id(st), [])):  # the innermost loop first
            if id(anc) in inside or any(x is loop for x in ir.walk([anc])):
                break  # a loop around ``loop``: its reads may see what ``loop`` wrote
            if id(anc) not in covered:
                covered[id(anc)] = _scan_kills(anc.body, name, bounds, _loop_env(env, env, anc, sites), fills,
                                               sites) != "unsafe"
            if covered[id(anc)]:
                ok = True
                break
        if not ok:
            return False
    return True


def unmodelled_reader(name: str, loop: ir.Do, kernel: ir.Kernel) -> bool:
    """May a statement outside ``loop`` that the IR does not model (I/O, ...) read ``name``?"""
    inside = {id(x) for x in ir.walk([loop])}
    return any(isinstance(st, ir.Unsupported) and id(st) not in inside and (st.reads is None or name in st.reads)
               for st in ir.walk(kernel.body))


def hosted(kernel: ir.Kernel, name: str) -> bool:
    """May a procedure the routine CONTAINs use ``name`` by host association (it names it
    after the CONTAINS statement)? Such a procedure, called after the loop, reads the array."""
    text = kernel.source_text or ""
    m = re.search(r"^[ \t]*contains[ \t]*(!.*)?$", text, re.M | re.I)
    return m is not None and re.search(rf"\b{re.escape(name)}\b", text[m.end():], re.I) is not None


def fills_before_reads(body: list[ir.Stmt], name: str, bounds: list, env: dict) -> bool:
    """Does ``body`` assign all of array ``name`` (constant ``bounds``) before reading any?"""
    return _scan_kills(body, name, bounds, env) == "killed"


def _call_fills(st: ir.Stmt, name: str, bounds: list, size: int, sites) -> bool:
    """A CALL passing the whole array ``name`` (or its first element) to a dummy the callee
    fills, at least ``size`` elements of it."""
    if not isinstance(st, ir.CallStmt):
        return False
    for q, a in enumerate(st.args):
        whole = isinstance(a, ir.Name) and a.name == name
        first = (isinstance(a, ir.ArrayRef) and a.name == name and len(a.subscripts) == len(bounds)
                 and all(isinstance(x, ir.Literal) and x.value == lo for x, (lo, _) in zip(a.subscripts, bounds)))
        if not (whole or first):
            continue
        try:
            d = sites.effects(st.name).dummy(q)
        except (KeyError, AttributeError):
            return False
        return d is not None and d.fills >= size
    return False


def _scan_kills(stmts: list[ir.Stmt], name: str, bounds: list, env: dict, fills=None, sites=None,
                known: tuple = ()) -> str:
    """'killed' (a nest wrote all of ``name`` before any read, a call ``fills`` says filled
    it, or the nests and calls so far wrote parts of it that every later read of the
    iteration stays in), 'clean' (no read before any full write), 'unsafe' (a read may see
    a value from another iteration). ``sites`` (accesses.CallSites): what calls write and
    read of it. ``known``: boxes of constant bounds the iteration wrote before ``stmts``."""
    boxes: list = list(known)
    base, track = env, _tracks(stmts)
    for k, st in enumerate(stmts):
        if k and track:
            env = _step(env, base, stmts[k - 1], sites)
        if fills is not None and fills(st):
            return "killed"
        grown = _call_boxes(st, name, env, sites) if isinstance(st, ir.CallStmt) else []
        point = _point_box(st, name, bounds, env) if track else None
        if point is not None:  # yt(1, 1) = yt(1, 1) + h: what it reads must be written already
            if reads(st, name) and not (boxes and _reads_within([st], name, merge_boxes(boxes) + boxes, env,
                                                                 sites=sites, declared=bounds)):
                return "unsafe"
            grown = [point]
        section = section_box(st, name, bounds, env)
        if section is not None:
            if all(affine.is_const(lo) and affine.is_const(hi) and (affine.constant(lo), affine.constant(hi)) == b
                   for (lo, hi), b in zip(section, bounds)):
                return "killed"  # w = 0, w(:) = ..., w(1:n) = ... over its declared extent
            grown = [section]
        if isinstance(st, ir.Do):
            if _full_write(st, name, bounds, env):
                return "killed"
            grown = fill_boxes(st, name, env)
            if not grown:
                grown = _recurrence_box(st, name, env, merge_boxes(boxes) + boxes)
        if boxes:  # a box in terms of scalars holds only while they keep their values
            gone = assigned_names(list(ir.walk([st])), sites)
            boxes = [b for b in boxes if not any((affine.names(lo) | affine.names(hi)) & gone for lo, hi in b)]
        if grown:
            boxes = boxes + grown
            # merged boxes hold what the union of ranges does, the boxes themselves what an
            # empty range loses in the merge (an end row written whatever the inner rows)
            seen = merge_boxes(boxes) + boxes
            if _reads_within(stmts[k + 1:], name, seen, env, sites=sites, declared=bounds):
                return "killed"  # a part of it, and the iteration reads no element outside that part
            continue
        if boxes and (reads(st, name) or any(reads(x, name) for x in ir.walk([st]))) and \
                _reads_within([st], name, merge_boxes(boxes) + boxes, env, sites=sites, declared=bounds):
            continue  # reads only elements this iteration wrote before (in a construct: over its loops' ranges)
        if isinstance(st, (ir.Do, ir.DoWhile, ir.If, ir.SelectCase)):
            if any(mentions(e, name) for e in ir.stmt_exprs(st)):
                return "unsafe"  # a bound or a condition reads it
            inner = _loop_env(env, base, st, sites) if track else base
            bodies = [st.body] if isinstance(st, ir.Do) else _bodies(st)
            written = tuple(b for b in merge_boxes(boxes) + boxes
                            if all(affine.is_const(lo) and affine.is_const(hi) for lo, hi in b))
            if any(_scan_kills(b, name, bounds, inner, fills, sites, written) == "unsafe" for b in bodies):
                return "unsafe"
            # each read inside was preceded, in its own pass or branch, by a write of that element
            # (a write in one branch covers no read after the construct: only reads count there)
            continue
        if reads(st, name):
            return "unsafe"
    return "clean"


def _bodies(st: ir.Stmt) -> list[list[ir.Stmt]]:
    """The statement lists a construct other than DO holds, each a path of its own."""
    if isinstance(st, ir.If):
        return [b for _, b in st.branches] + [st.else_body]
    if isinstance(st, ir.SelectCase):
        return [c.body for c in st.cases]
    if isinstance(st, ir.Where):
        return [st.body, st.elsewhere]
    if isinstance(st, ir.DoWhile):
        return [st.body]
    return []


_JUMPS = (ir.Goto, ir.ComputedGoto, ir.ArithmeticIf)


def _tracks(stmts: list[ir.Stmt]) -> bool:
    """May the scan follow integer scalars set to constants through ``stmts`` in order? Not
    where a GOTO could skip an assignment."""
    return not any(isinstance(x, _JUMPS) for x in ir.walk(stmts))


def _step(env: dict, base: dict, st: ir.Stmt, sites) -> dict:
    """``env`` after ``st``: an integer scalar assigned a constant (``ic = 2``, in the order of
    the statements: QCD's unrolled colour loops) holds it, one assigned a linear expression of
    other scalars holds that (TeaLeaf's block solve: ``k = bottom``, then ``dp_l(k - bottom)``
    is element 0) until one of them changes; whatever else ``st`` may change, at any depth, is
    forgotten (an unmodelled statement forgets them all)."""
    if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and (st.target.ftype is None or
                                                                        st.target.ftype.base == "integer"):
        name = st.target.name
        p = affine.poly_of(st.value, env)
        out = _forget(env, {name})
        if p is not None and name not in base:
            if affine.is_const(p):
                out[name] = affine.constant(p)
            elif all(len(m) <= 1 for m in p) and name not in affine.names(p):
                out[name] = p
        return out
    inner = list(ir.walk([st]))
    if any(isinstance(x, ir.Unsupported) for x in inner):
        return dict(base)
    return _forget(env, assigned_names(inner, sites))


def _loop_env(env: dict, base: dict, st: ir.Stmt, sites) -> dict:
    """What holds at every pass through a loop's body (DO, DO WHILE): nothing the body or the
    loop changes; another construct's bodies start from ``env`` itself."""
    if not isinstance(st, (ir.Do, ir.DoWhile)):
        return env
    gone = assigned_names(list(ir.walk(st.body)), sites) | ({st.var} if isinstance(st, ir.Do) else set())
    return _forget(env, gone)


def _point_box(st: ir.Stmt, name: str, bounds: list, env: dict) -> Optional[list]:
    """The element an assignment ``name(c1, c2, ...) = ...`` writes, its subscripts constant
    in ``env`` (what its value reads of ``name`` is the caller's to check)."""
    if not (isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name
            and len(st.target.subscripts) == len(bounds)):
        return None
    box = []
    for sub in st.target.subscripts:
        p = affine.poly_of(sub, env) if not isinstance(sub, ir.Slice) else None
        if p is None or any(len(m) > 1 for m in p):
            return None  # a linear expression of scalars: the scan drops the box when one changes
        box.append((p, p))
    return box


def _full_write(do: ir.Do, name: str, bounds: list, env: dict) -> bool:
    """Is ``do`` a nest that assigns every element of ``name`` (:func:`fill_boxes` covering
    each dimension's whole declared extent)?"""
    return any(len(box) == len(bounds) and all(
        affine.is_const(lo) and affine.is_const(hi) and (affine.constant(lo), affine.constant(hi)) == b
        for (lo, hi), b in zip(box, bounds)) for box in merge_boxes(fill_boxes(do, name, env)))


def _call_boxes(st: ir.CallStmt, name: str, env: dict, sites) -> list:
    """Boxes of ``name`` the call surely assigns: a dummy the callee writes without ever
    reading it, filled by its nests (effects.DummyEffect.fill_boxes), seen through the
    actual argument (the whole array or an element) in the caller's indices."""
    passed = [q for q, a in enumerate(st.args) if isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name]
    if sites is None or len(passed) != 1:
        return []  # passed twice: the other dummy may read it
    out = []
    for q, a in enumerate(st.args):
        if isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name:
            try:
                boxes = sites.calls.fill_boxes(sites.kernel, st.name, st.args, q)
            except (KeyError, AttributeError, ValueError, TypeError):
                boxes = []
            out += [box for box in boxes if not any(len(t) > 1 for lo, hi in box for t in list(lo) + list(hi))]
    return out


def _reads_within(stmts: list[ir.Stmt], name: str, boxes: list, env: dict, loops=None, sites=None,
                  declared=None) -> bool:
    """Do ``stmts`` read ``name`` only inside ``boxes`` (each subscript's range over the
    loops around it within one box's bounds, by a constant margin), with the boxes'
    variables unchanged? A call passing the array reads what the callee touches of it
    (``sites``: effects.Calls.actual_ref), or all of it when that is not known.
    ``declared``: the array's constant bounds; a box reaching one of them holds every element
    read on that side (a read outside the declared bounds is no valid Fortran)."""
    loops = loops or []
    names = set().union(*(affine.names(lo) | affine.names(hi) for box in boxes for lo, hi in box))
    base, track = env, _tracks(stmts)
    for k, st in enumerate(stmts):
        if k and track:
            env = _step(env, base, stmts[k - 1], sites)
        if assigned_names([st], sites) & names:
            return False
        if passes(st, name) and not _call_reads_within(st, name, boxes, env, loops, sites, declared):
            return False
        exprs = [] if isinstance(st, ir.CallStmt) else list(ir.stmt_exprs(st))
        if isinstance(st, ir.CallStmt):
            exprs = [a for a in st.args if not (isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name)]
            exprs += [x for a in st.args if isinstance(a, ir.ArrayRef) and a.name == name for x in a.subscripts]
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
            exprs = [st.value] + list(st.target.subscripts)
        for e in exprs:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Name) and x.name == name:
                    return False  # the whole array
                if isinstance(x, ir.ArrayRef) and x.name == name and not _inside(x, boxes, env, loops, declared):
                    return False
        if isinstance(st, ir.Do):
            lo, hi = affine.poly_of(st.start, env), affine.poly_of(st.end, env)
            unit = st.step is None or (isinstance(st.step, ir.Literal) and st.step.value == 1)
            if not unit and affine.poly_of(st.step, env) == affine.const(-1):
                lo, hi, unit = hi, lo, True  # a downward loop covers the same range
            inner = loops + [(st.var, lo, hi)] if unit and lo is not None and hi is not None else None
            if inner is None:
                if any(reads(x, name) for x in ir.walk(st.body)):
                    return False
                continue
            if not _reads_within(st.body, name, boxes, _loop_env(env, base, st, sites) if track else base, inner,
                                 sites, declared):
                return False
        else:
            for b in _bodies(st):
                if not _reads_within(b, name, boxes, _loop_env(env, base, st, sites) if track else base, loops,
                                     sites, declared):
                    return False
    return True


def _call_reads_within(st: ir.CallStmt, name: str, boxes: list, env: dict, loops: list, sites,
                       declared=None) -> bool:
    if sites is None:
        return False
    for q, a in enumerate(st.args):
        if not (isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name):
            continue
        try:
            ref = sites.calls.actual_ref(sites.kernel, st.name, st.args, q)
        except (KeyError, AttributeError, ValueError, TypeError):
            return False
        if ref is None:
            continue  # the callee never touches it
        if not isinstance(ref, ir.ArrayRef) or not _inside(ref, boxes, env, loops, declared):
            return False
    return True


def _inside(x: ir.ArrayRef, boxes: list, env: dict, loops: list, declared=None) -> bool:
    """Is every element ``x`` can name (points, or ``Slice`` ranges) over ``loops`` in one
    of ``boxes``? A box side at the ``declared`` bound holds every valid subscript there."""
    ranges = []
    for sub in x.subscripts:
        if isinstance(sub, ir.Slice):
            if sub.lower is None or sub.upper is None or getattr(sub, "step", None) is not None:
                return False
            lo, hi = affine.poly_of(sub.lower, env), affine.poly_of(sub.upper, env)
        else:
            lo = hi = affine.poly_of(sub, env)
        if lo is None or hi is None or any(len(t) > 1 for t in list(lo) + list(hi)):
            return False
        smin, smax = affine.extreme(lo, loops, -1), affine.extreme(hi, loops, +1)
        if smin is None or smax is None:
            return False
        ranges.append((smin, smax))
    edges = declared if declared is not None and len(declared) == len(ranges) else [(None, None)] * len(ranges)
    return any(len(box) == len(ranges) and all(
        (affine.nonneg(affine.add(smin, lo, -1)) or _at(lo, dlo)) and (affine.nonneg(affine.add(hi, smax, -1)) or _at(hi, dhi))
        for (smin, smax), (lo, hi), (dlo, dhi) in zip(ranges, box, edges)) for box in boxes)


def _at(p, bound) -> bool:
    """Is the polynomial ``p`` the constant ``bound``?"""
    return bound is not None and affine.is_const(p) and affine.constant(p) == bound


def last_private_array(name: str, loop: ir.Do, kernel: ir.Kernel, env: dict, sites=None) -> bool:
    """Can each iteration of ``loop`` have its own copy of the array ``name`` although its
    values matter after the loop (a COMMON or module scratch array, a dummy, a local read
    later: NPB's ``fjac`` in ``/work_lhs/``)? Besides the conditions of a private array
    (constant shape, no larger than PRIVATE_ARRAY_ELEMENTS, read in the iteration only
    after a nest filled what it reads), every iteration writes the same elements: each
    write unconditional, its subscripts and the bounds of the loops around it free of the
    loop's variable and of anything the loop assigns. The sequentially last iteration then
    writes every element any iteration writes, so the port lets that iteration work on the
    array itself and the others on their copies (``pf::Scratch``). A call writing it
    (``sites``: accesses.CallSites) writes the same elements each time when it is
    unconditional, its arguments are the same in every iteration and the callee's own
    writes of the dummy follow these rules."""
    if not _scratch_shape(name, loop, kernel, env):
        return False
    bounds = constant_bounds(_array_of(name, kernel).dims, env)
    if _scan_kills(loop.body, name, bounds, env, sites=sites) == "unsafe":
        return False
    varying = {loop.var} | {s.var for s in ir.walk(loop.body) if isinstance(s, ir.Do)} | \
        {s.target.name for s in ir.walk(loop.body) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)}
    return _same_writes(loop.body, name, varying, set(), False, sites)


def _array_of(name: str, kernel: ir.Kernel):
    v = kernel.locals.get(name)
    return v if v is not None else next((a for a in kernel.args if a.name == name), None)


def _scratch_shape(name: str, loop: ir.Do, kernel: ir.Kernel, env: dict) -> bool:
    """An array of the routine (a local, COMMON member or dummy) a copy per iteration can
    stand for: constant shape no larger than PRIVATE_ARRAY_ELEMENTS, no other name for its
    storage, and a loop no iteration of which is cut short (it would write fewer elements)."""
    v = _array_of(name, kernel)
    if v is None or not v.dims or getattr(v, "parameter", None) is not None or getattr(v, "allocatable", False) \
            or getattr(v, "pointer", False) or any(name in cls for cls in kernel.equivalences):
        return False
    bounds = constant_bounds(v.dims, env)
    if bounds is None or element_count(bounds) > PRIVATE_ARRAY_ELEMENTS:
        return False
    return not any(isinstance(s, (ir.Cycle, ir.Exit, ir.Goto, ir.Return, ir.Stop)) for s in ir.walk(loop.body))


def write_through_boxes(name: str, loop: ir.Do, kernel: ir.Kernel, env: dict, sites=None) -> Optional[list]:
    """The elements of array ``name`` every iteration of ``loop`` writes, as boxes (per
    dimension a (lower, upper) pair of Fortran expressions), when the iteration writes them
    all before it reads any element, the same ones in every iteration -- although its reads
    are not shown to fall in what it wrote (SP's line solves fill ``cv(i)`` for ``i = 0,
    grid_points(1) - 1`` and read ``cv(i + 1)`` for ``i = 1, nx2``, ``nx2`` a COMMON
    member set elsewhere). No iteration writes an element outside the boxes, so such a read
    sees the value from before the loop, which the array itself still holds; a read inside
    them sees what the iteration wrote. So the port gives each iteration a copy for the
    boxes and reads the array outside them (``pf::BoxScratch``), the last iteration writing
    through as for :func:`last_private_array`. None when the loop is not of that form:

    - the body (past loops perfectly nested in it whose bounds no iteration changes) is a
      run of statements that only write ``name``, then statements that only read it;
    - each write is an assignment at the top of a nest of unit-step loops whose bounds no
      iteration changes, unconditional, each subscript one of the nest's variables or an
      expression no iteration changes; every loop of the nest gives a subscript its range
      (an empty range then writes, and claims, nothing);
    - every call in the loop is to a routine of the program with known effects, and none is
      passed ``name``;
    - the array has a value before the routine (a dummy, COMMON, SAVE): a plain local read
      where nothing wrote it would read garbage in the original, and stays serial."""
    v = _array_of(name, kernel)
    if v is None or not (getattr(v, "common", None) is not None or getattr(v, "save", False)
                         or any(a.name == name for a in kernel.args)):
        return None
    if not _scratch_shape(name, loop, kernel, env):
        return None
    walked = list(ir.walk(loop.body))
    if any(isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name == name for st in walked):
        return None  # the whole array assigned
    changed = assigned_names(walked, sites) | {loop.var}
    written = set()
    for st in walked:
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef):
            written.add(st.target.name)
        calls = [(st.name, st.args)] if isinstance(st, ir.CallStmt) else []
        calls += [(x.name, x.args) for e in ir.stmt_exprs(st) for x in ir.walk_expr(e)
                  if isinstance(x, ir.FuncCall) and not x.intrinsic]
        for cname, args in calls:
            eff = sites.analysed(cname, len(args)) if sites is not None else None
            if eff is None or not eff.translatable:
                return None  # it may change what the bounds read (COMMON, module state)
            if any(isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name for a in args):
                return None
            pos = eff.written_positions()
            written |= {a.name for q, a in enumerate(args) if isinstance(a, (ir.Name, ir.ArrayRef)) and q in pos}

    def invariant(e: Optional[ir.Expr]) -> bool:
        return e is None or not any(
            (isinstance(x, ir.FuncCall) and not x.intrinsic) or (isinstance(x, ir.Name) and x.name in changed)
            or (isinstance(x, ir.ArrayRef) and (x.name in written or x.name == name)) for x in ir.walk_expr(e))

    body = loop.body
    while True:  # the loops perfectly nested in it run the same way in every iteration
        stmts = [st for st in body if not isinstance(st, ir.Continue)]
        if len(stmts) == 1 and isinstance(stmts[0], ir.Do) and \
                all(invariant(e) for e in (stmts[0].start, stmts[0].end, stmts[0].step)):
            body = stmts[0].body
            continue
        break
    writers = [q for q, st in enumerate(stmts) if any(isinstance(x, ir.Assign) and isinstance(x.target, ir.ArrayRef)
                                                      and x.target.name == name for x in ir.walk([st]))]
    if not writers:
        return None
    boxes: list = []
    for st in stmts[:writers[-1] + 1]:
        if not _mentions(st, name):
            continue
        if any(reads(x, name) for x in ir.walk([st])):
            return None  # a read before the last write may see another iteration's value
        got = _exact_boxes(st, name, invariant)
        if got is None:
            return None
        boxes += got
    return boxes


def _mentions(st: ir.Stmt, name: str) -> bool:
    """Does ``st``, or a statement it holds, read or assign ``name``?"""
    return any(mentions(e, name) for x in ir.walk([st]) for e in ir.stmt_exprs(x))


def _exact_boxes(st: ir.Stmt, name: str, invariant) -> Optional[list]:
    """Every element of ``name`` the statement writes, exactly, as boxes of Fortran
    expressions (see :func:`write_through_boxes`); None when it writes otherwise."""
    def box_of(target: ir.ArrayRef, ranges: dict) -> Optional[list]:
        box, used = [], set()
        for sub in target.subscripts:
            if isinstance(sub, ir.Name) and sub.name in ranges and sub.name not in used:
                used.add(sub.name)
                box.append(ranges[sub.name])
            elif not isinstance(sub, ir.Slice) and invariant(sub) and not any(
                    isinstance(x, ir.Name) and x.name in ranges for x in ir.walk_expr(sub)):
                box.append((sub, sub))
            else:
                return None
        return box if used == set(ranges) else None  # an unused loop may run zero times

    if isinstance(st, ir.Assign):
        return [box_of(st.target, {})] if isinstance(st.target, ir.ArrayRef) and box_of(st.target, {}) else None
    if not isinstance(st, ir.Do):
        return None
    if any(isinstance(x, CUT) for x in ir.walk([st])):
        return None
    found = fill_chain(st, name)
    if found is None:
        return None
    loops, body, targets = found
    ranges: dict = {}
    for k, loop in enumerate(loops):
        if not unit_step(loop) or not invariant(loop.start) or not invariant(loop.end) \
                or any(isinstance(x, ir.Name) and x.name in ranges for e in (loop.start, loop.end) for x in ir.walk_expr(e)):
            return None
        ranges[loop.var] = (loop.start, loop.end)
        beside = [x for x in loop.body if x is not (loops[k + 1] if k + 1 < len(loops) else None)
                  and not any(x is t for t in targets)]
        if any(_mentions(x, name) for x in beside):
            return None  # another write (conditional, in a deeper loop, through a call)
    out = []
    for t in targets:
        box = box_of(t.target, ranges)
        if box is None:
            return None
        out.append(box)
    return out


def _same_writes(stmts: list[ir.Stmt], name: str, varying: set, inner: set, conditional: bool, sites=None) -> bool:
    """Every write of ``name`` in ``stmts`` unconditional, subscripted by the variables of
    the loops around it (``inner``) and by values no iteration changes; a call writing it
    passes only such values and writes its dummy by the same rules."""
    for st in stmts:
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
            names = {x.name for sub in st.target.subscripts for x in ir.walk_expr(sub)
                     if isinstance(x, (ir.Name, ir.ArrayRef))}
            if conditional or (names & varying) - inner or any(isinstance(x, ir.ArrayRef) for sub in st.target.subscripts
                                                               for x in ir.walk_expr(sub)):
                return False
        elif isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name == name:
            return False
        elif passes(st, name):
            if conditional or not _same_call_writes(st, name, varying - inner, sites):
                return False
        elif isinstance(st, ir.Do):
            bnames = {x.name for e in (st.start, st.end, st.step) if e is not None for x in ir.walk_expr(e)
                      if isinstance(x, (ir.Name, ir.ArrayRef))}
            writes = any(isinstance(x, ir.Assign) and isinstance(x.target, ir.ArrayRef) and x.target.name == name
                         for x in ir.walk(st.body))
            if writes and bnames & (varying - inner):  # an enclosing loop of the nest runs alike
                return False
            if not _same_writes(st.body, name, varying, inner | {st.var}, conditional, sites):
                return False
        else:
            # a branch taken by the loops' own variables and unchanged values is taken
            # alike in every iteration: its writes are not conditional on data
            alike = isinstance(st, ir.If) and all(_invariant(c, varying - inner) for c, _ in st.branches)
            for b in _bodies(st):
                if not _same_writes(b, name, varying, inner, conditional or not alike, sites):
                    return False
    return True


def _invariant(e: ir.Expr, varying: set) -> bool:
    """An expression of scalars none of ``varying``, no array element or function call."""
    return not any(isinstance(x, (ir.ArrayRef, ir.FuncCall)) or (isinstance(x, ir.Name) and x.name in varying)
                   for x in ir.walk_expr(e))


def _same_call_writes(st: ir.CallStmt, name: str, varying: set, sites) -> bool:
    """Does the call write the same elements of ``name`` whatever the iteration: every
    argument free of what iterations change, and the callee writing the dummy
    unconditionally at subscripts of its own loops and unchanged values?"""
    eff = sites.analysed(st.name, len(st.args)) if sites is not None else None
    if eff is None:
        return False
    callee = eff.callee
    for q, a in enumerate(st.args):  # the array's own element and the scalars the callee gets
        other = isinstance(a, (ir.Name, ir.ArrayRef)) and a.name != name and q < len(callee.args) \
            and callee.args[q].dims
        if not other and any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name in varying for x in ir.walk_expr(a)):
            return False
    for q, a in enumerate(st.args):
        if not (isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name):
            continue
        d = eff.dummy(q)
        if d is None or not d.write:
            continue
        top = callee.body[:-1] if callee.body and isinstance(callee.body[-1], ir.Return) else callee.body
        body = list(ir.walk(top))
        if any(isinstance(x, CUT) for x in body):
            return False
        changed = assigned_names(body) | {x.target.name for x in body if isinstance(x, ir.Assign)
                                           and isinstance(x.target, ir.Name)}
        changed -= set_once(top, changed)  # the same value in every call with the same arguments
        if not _same_writes(callee.body, callee.args[q].name, changed, set(), False):
            return False
    return True


def nest_only_array(kernel: ir.Kernel, do: ir.Do, name: str) -> bool:
    """Is ``name`` a local array of ``kernel`` that only the nest ``do`` uses (of constant
    extents, no SAVE, DATA, COMMON, EQUIVALENCE or allocation, in a routine that contains no
    procedures)? Its values before the nest are undefined and nothing reads it after, so a
    nest outlined into a kernel of its own can hold it as a local (CCS-QCD's ``yt``) rather
    than take it as an argument -- and then find it private to each iteration."""
    v = kernel.locals.get(name)
    if v is None or not v.dims or v.save or v.common is not None or v.parameter is not None or v.allocatable \
            or getattr(v, "pointer", False) or kernel.kind == "program" or kernel.host or hosted(kernel, name) \
            or any(name in cls for cls in kernel.equivalences) \
            or constant_bounds(v.dims, kernel.constants()) is None:
        return False
    inside = {id(x) for x in ir.walk([do])}
    return not any(id(st) not in inside and (any(mentions(e, name) for e in ir.stmt_exprs(st)) or _io_uses(st, name))
                   for st in ir.walk(kernel.body))


def _io_uses(st: ir.Stmt, name: str) -> bool:
    """May a statement the IR keeps unmodelled (I/O: ``print *, yt``) use ``name``?"""
    if not isinstance(st, ir.Unsupported):
        return False
    return st.reads is None or name in st.reads or name in (st.writes or []) \
        or re.search(rf"\b{re.escape(name)}\b", st.text or "", re.I) is not None
