"""Array privatisation for the dependence test: a local scratch array that every iteration
of a loop fills before reading it -- over its whole extent, or over a part that every later
read of the iteration stays in (NPB MG's line buffers ``r1(i1)``, filled for ``i1 = 1, n1``
and read at ``i1 - 1`` and ``i1 + 1`` for ``i1 = 2, n1 - 1``) -- and that nothing outside the
loop reads, is private to the iteration (a copy per iteration, ``pf::Private`` in the port)
instead of a dependence between iterations."""
from __future__ import annotations

from . import affine, ir


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
            or any(name in cls for cls in kernel.equivalences):
        return False
    bounds = constant_bounds(v.dims, env)
    if bounds is None or element_count(bounds) > PRIVATE_ARRAY_ELEMENTS:
        return False
    inside = {id(x) for x in ir.walk([loop])}
    if any(id(st) not in inside and _reads(st, name) for st in ir.walk(kernel.body)):
        return False
    fills = None
    if sites is not None:
        size = element_count(bounds)
        fills = lambda st: _call_fills(st, name, bounds, size, sites)  # noqa: E731
    return _scan_kills(loop.body, name, bounds, env, fills) != "unsafe"


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


def _passes(st: ir.Stmt, name: str) -> bool:
    """Is ``st`` a CALL with the array ``name`` (or one of its elements) among its arguments?"""
    return isinstance(st, ir.CallStmt) and any(isinstance(a, (ir.Name, ir.ArrayRef)) and a.name == name
                                               for a in st.args)


def _reads(st: ir.Stmt, name: str) -> bool:
    """Does the statement itself (not the statements it holds) read the array ``name``?"""
    exprs = list(ir.stmt_exprs(st))
    if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
        exprs = [st.value] + list(st.target.subscripts)  # the target element is written, its subscripts read
    if _passes(st, name):
        return True  # the callee may read it
    for e in exprs:
        for x in ir.walk_expr(e):
            if isinstance(x, (ir.ArrayRef, ir.Name)) and getattr(x, "name", None) == name:
                return True
    return False


def _scan_kills(stmts: list[ir.Stmt], name: str, bounds: list, env: dict, fills=None) -> str:
    """'killed' (a nest wrote all of ``name`` before any read, or a call ``fills`` says
    filled it), 'clean' (no read before any full write), 'unsafe' (a read may see a value
    from another iteration)."""
    for k, st in enumerate(stmts):
        if fills is not None and fills(st):
            return "killed"
        if isinstance(st, ir.Do):
            if _full_write(st, name, bounds, env):
                return "killed"
            region = _fill_region(st, name, env)
            if region is not None and _reads_within(stmts[k + 1:], name, region, env):
                return "killed"  # a part of it, and the iteration reads no element outside that part
            if _reads(st, name) or _scan_kills(st.body, name, bounds, env, fills) == "unsafe":
                return "unsafe"
        elif _reads(st, name) or any(_scan_kills(b, name, bounds, env, fills) == "unsafe" for b in _bodies(st)):
            return "unsafe"  # a write in one branch covers no read: only reads are looked for there
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


def _full_write(do: ir.Do, name: str, bounds: list, env: dict) -> bool:
    """Is ``do`` a nest that assigns every element of ``name`` (:func:`_fill_region` over
    each dimension's whole declared extent)?"""
    region = _fill_region(do, name, env)
    return region is not None and len(region) == len(bounds) and all(
        affine.is_const(lo) and affine.is_const(hi) and (affine.constant(lo), affine.constant(hi)) == b
        for (lo, hi), b in zip(region, bounds))


def element_count(bounds: list) -> int:
    """Elements of an array of constant (lower, upper) bounds."""
    n = 1
    for lo, hi in bounds:
        n *= hi - lo + 1
    return n


def _fill_region(do: ir.Do, name: str, env: dict):
    """The part of ``name`` a nest assigns whole, as (lower, upper) polynomials per
    dimension: the nest's loops each alone in its parent (or the last one holding the
    assignment), unit steps, bounds free of the nest's own variables, the assignment
    unconditional at the top of the innermost body, each subscript one of the nest's
    variables, no read of ``name`` in the nest. None otherwise."""
    chain, loop = [], do
    while True:
        if loop.step is not None and not (isinstance(loop.step, ir.Literal) and loop.step.value == 1):
            return None
        lo, hi = affine.poly_of(loop.start, env), affine.poly_of(loop.end, env)
        if lo is None or hi is None or any(len(t) > 1 for t in list(lo) + list(hi)) \
                or (affine.names(lo) | affine.names(hi)) & {v for v, _, _ in chain}:
            return None
        chain.append((loop.var, lo, hi))
        body = [st for st in loop.body if not isinstance(st, ir.Continue)]
        target = [st for st in body if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef)
                  and st.target.name == name]
        if target:
            break
        inner = [st for st in body if isinstance(st, ir.Do)]
        if len(inner) != 1:
            return None
        loop = inner[0]
    if any(_reads(st, name) for st in ir.walk([do])):
        return None
    range_of = {v: (lo, hi) for v, lo, hi in chain}
    region, used = [], set()
    for sub in target[0].target.subscripts:
        if not isinstance(sub, ir.Name) or sub.name not in range_of or sub.name in used:
            return None
        used.add(sub.name)
        region.append(range_of[sub.name])
    return region


def _reads_within(stmts: list[ir.Stmt], name: str, region: list, env: dict, loops=None) -> bool:
    """Do ``stmts`` read ``name`` only inside ``region`` (each subscript's range over the loops
    around it within the bounds, by a constant margin), with the region's variables
    unchanged? Calls passing the array count as reads of all of it."""
    loops = loops or []
    names = set().union(*(affine.names(lo) | affine.names(hi) for lo, hi in region))
    for st in stmts:
        if isinstance(st, (ir.Assign, ir.Do)) and (
                (isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name in names)
                or (isinstance(st, ir.Do) and st.var in names)):
            return False
        if _passes(st, name):
            return False
        exprs = list(ir.stmt_exprs(st))
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
            exprs = [st.value] + list(st.target.subscripts)
        for e in exprs:
            for x in ir.walk_expr(e):
                if isinstance(x, ir.Name) and x.name == name:
                    return False  # the whole array
                if isinstance(x, ir.ArrayRef) and x.name == name and not _inside(x, region, env, loops):
                    return False
        if isinstance(st, ir.Do):
            lo, hi = affine.poly_of(st.start, env), affine.poly_of(st.end, env)
            unit = st.step is None or (isinstance(st.step, ir.Literal) and st.step.value == 1)
            inner = loops + [(st.var, lo, hi)] if unit and lo is not None and hi is not None else None
            if inner is None:
                if any(_reads(x, name) for x in ir.walk(st.body)):
                    return False
                continue
            if not _reads_within(st.body, name, region, env, inner):
                return False
        else:
            for b in _bodies(st):
                if not _reads_within(b, name, region, env, loops):
                    return False
    return True


def _inside(x: ir.ArrayRef, region: list, env: dict, loops: list) -> bool:
    if len(x.subscripts) != len(region):
        return False
    for sub, (lo, hi) in zip(x.subscripts, region):
        p = affine.poly_of(sub, env) if not isinstance(sub, ir.Slice) else None
        if p is None or any(len(t) > 1 for t in p):
            return False
        smin, smax = affine.extreme(p, loops, -1), affine.extreme(p, loops, +1)
        if smin is None or smax is None:
            return False
        low, high = affine.add(smin, lo, -1), affine.add(hi, smax, -1)
        if not (affine.is_const(low) and affine.constant(low) >= 0 and affine.is_const(high)
                and affine.constant(high) >= 0):
            return False
    return True


def last_private_array(name: str, loop: ir.Do, kernel: ir.Kernel, env: dict) -> bool:
    """Can each iteration of ``loop`` have its own copy of the array ``name`` although its
    values matter after the loop (a COMMON or module scratch array, a dummy, a local read
    later: NPB's ``fjac`` in ``/work_lhs/``)? Besides the conditions of a private array
    (constant shape, no larger than PRIVATE_ARRAY_ELEMENTS, read in the iteration only
    after a nest filled what it reads), every iteration writes the same elements: each
    write unconditional, its subscripts and the bounds of the loops around it free of the
    loop's variable and of anything the loop assigns. The sequentially last iteration then
    writes every element any iteration writes, so the port lets that iteration work on the
    array itself and the others on their copies (``pf::Scratch``)."""
    v = kernel.locals.get(name)
    if v is None:
        v = next((a for a in kernel.args if a.name == name), None)
    if v is None or not v.dims or getattr(v, "parameter", None) is not None or getattr(v, "allocatable", False) \
            or getattr(v, "pointer", False) or any(name in cls for cls in kernel.equivalences):
        return False
    bounds = constant_bounds(v.dims, env)
    if bounds is None or element_count(bounds) > PRIVATE_ARRAY_ELEMENTS:
        return False
    if _scan_kills(loop.body, name, bounds, env) == "unsafe":
        return False
    if any(isinstance(s, (ir.Cycle, ir.Exit, ir.Goto, ir.Return)) for s in ir.walk(loop.body)):
        return False  # an iteration cut short writes fewer elements
    varying = {loop.var} | {s.var for s in ir.walk(loop.body) if isinstance(s, ir.Do)} | \
        {s.target.name for s in ir.walk(loop.body) if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)}
    return _same_writes(loop.body, name, varying, set(), False)


def _same_writes(stmts: list[ir.Stmt], name: str, varying: set, inner: set, conditional: bool) -> bool:
    """Every write of ``name`` in ``stmts`` unconditional, subscripted by the variables of
    the loops around it (``inner``) and by values no iteration changes."""
    for st in stmts:
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.ArrayRef) and st.target.name == name:
            names = {x.name for sub in st.target.subscripts for x in ir.walk_expr(sub)
                     if isinstance(x, (ir.Name, ir.ArrayRef))}
            if conditional or (names & varying) - inner or any(isinstance(x, ir.ArrayRef) for sub in st.target.subscripts
                                                               for x in ir.walk_expr(sub)):
                return False
        elif isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name == name:
            return False
        elif _passes(st, name):
            return False
        elif isinstance(st, ir.Do):
            bnames = {x.name for e in (st.start, st.end, st.step) if e is not None for x in ir.walk_expr(e)
                      if isinstance(x, (ir.Name, ir.ArrayRef))}
            writes = any(isinstance(x, ir.Assign) and isinstance(x.target, ir.ArrayRef) and x.target.name == name
                         for x in ir.walk(st.body))
            if writes and bnames & varying:
                return False
            if not _same_writes(st.body, name, varying, inner | {st.var}, conditional):
                return False
        else:
            for b in _bodies(st):
                if not _same_writes(b, name, varying, inner, True):
                    return False
    return True
