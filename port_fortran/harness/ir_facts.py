"""What the harness reads from the IR: the roles of the arguments, the subscript ranges
the kernel can touch, byte and flop counts. Pure functions over :mod:`fortran.ir`.

The front end fills ``Argument.used_as_size``, ``compared_with`` and ``access_bounds``; the
functions here use them when present and otherwise look at the statement tree themselves,
so a spec can be inferred from a partly analysed kernel too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..fortran import affine, ir
from ..fortran.render import expr_str

SQRT_LIKE = {"sqrt", "log", "log10", "dsqrt", "dlog", "alog", "alog10", "dlog10", "acos", "asin"}


# --------------------------------------------------------------------------- walks


all_exprs_of_stmt = ir.stmt_exprs  # top-level expressions a statement holds
from .index_arrays import index_arrays  # noqa: E402,F401  (the index facts live there)


def kernel_exprs(kernel: ir.Kernel):
    """Every expression node in the kernel body (pre-order)."""
    for s in ir.walk(kernel.body):
        for e in all_exprs_of_stmt(s):
            yield from ir.walk_expr(e)


def names_in(e: Optional[ir.Expr]) -> set[str]:
    if e is None:
        return set()
    out = set()
    for x in ir.walk_expr(e):
        if isinstance(x, ir.Name):
            out.add(x.name)
        elif isinstance(x, ir.ArrayRef):
            out.add(x.name)
    return out


def arrays_of(kernel: ir.Kernel) -> list[ir.Argument]:
    return [a for a in kernel.args if a.rank > 0]


def scalars_of(kernel: ir.Kernel) -> list[ir.Argument]:
    return [a for a in kernel.args if a.rank == 0]


# --------------------------------------------------------------------------- printing


_PREC = {"or": 1, "and": 2, "==": 3, "/=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
         "+": 4, "-": 4, "*": 5, "/": 5, "**": 6}


def to_py(e: ir.Expr) -> str:
    """An IR expression as a spec expression (Python syntax, names lower case).
    Raises ValueError for what a spec expression cannot hold."""
    if isinstance(e, ir.Literal):
        if isinstance(e.value, bool) or not isinstance(e.value, (int, float)):
            raise ValueError(f"literal {e.value!r}")
        return repr(e.value)
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.UnaryOp) and e.op in "+-":
        return f"{e.op}{_paren(e.operand, 6)}"
    if isinstance(e, ir.BinOp) and e.op in ("+", "-", "*", "/", "**"):
        p = _PREC[e.op]
        op = "//" if e.op == "/" else e.op
        right_p = p + 1 if e.op in "-/" else p
        return f"{_paren(e.left, p)} {op} {_paren(e.right, right_p)}"
    if isinstance(e, ir.FuncCall) and e.name in ("max", "min", "abs", "mod") and not e.keywords:
        return f"{e.name}({', '.join(to_py(a) for a in e.args)})"
    raise ValueError(f"cannot express {type(e).__name__} in a spec")


def _paren(e: ir.Expr, p: int) -> str:
    s = to_py(e)
    if isinstance(e, ir.BinOp) and _PREC.get(e.op, 9) < p:
        return f"({s})"
    if isinstance(e, ir.UnaryOp):
        return f"({s})"
    return s


# --------------------------------------------------------------------------- roles


def flag_values(kernel: ir.Kernel, arg: ir.Argument) -> list[str]:
    """Literal strings a character argument is compared with (front end, else own walk)."""
    vals = [v for v in arg.compared_with if isinstance(v, str)]
    if not vals:
        for e in kernel_exprs(kernel):
            if isinstance(e, ir.BinOp) and e.op in ("==", "/="):
                for a, b in ((e.left, e.right), (e.right, e.left)):
                    if isinstance(a, ir.Name) and a.name == arg.name and isinstance(b, ir.Literal) \
                            and isinstance(b.value, str):
                        vals.append(b.value)
            if isinstance(e, ir.FuncCall) and e.name in ("lsame",) and len(e.args) == 2:
                a, b = e.args
                if isinstance(a, ir.Name) and a.name == arg.name and isinstance(b, ir.Literal):
                    vals.append(str(b.value))
    out: list[str] = []
    seen: set[str] = set()
    for v in vals:
        key = v.strip().upper()
        if key and key not in seen:
            seen.add(key)
            out.append(v.strip())
    if len(out) == 1:  # the code tests one value: also exercise "anything else"
        other = next(c for c in ("T", "N", "C", "X", "Z") if c not in seen)
        out.append(other)
    return out


def loop_bound_names(kernel: ir.Kernel) -> set[str]:
    out: set[str] = set()
    for d in kernel.loops():
        out |= names_in(d.start) | names_in(d.end)
    return out


def dim_bound_names(kernel: ir.Kernel) -> set[str]:
    out: set[str] = set()
    for a in arrays_of(kernel):
        for d in a.dims:
            out |= names_in(d.lower) | names_in(d.upper)
    return out


def leading_dims(kernel: ir.Kernel) -> dict[str, str]:
    """Integer scalars used as the extent of a non-last dimension of a 2-D+ array
    (``a(lda,*)``): name -> the expression of the rows it must hold (at least)."""
    out: dict[str, str] = {}
    loop_names = loop_bound_names(kernel)
    for a in arrays_of(kernel):
        for k, d in enumerate(a.dims[:-1]):
            if isinstance(d.upper, ir.Name) and d.lower is None or (
                    isinstance(d.upper, ir.Name) and isinstance(d.lower, ir.Literal) and d.lower.value == 1):
                name = d.upper.name
                try:
                    arg = kernel.arg(name)
                except KeyError:
                    continue
                if arg.rank or arg.ftype.base != "integer" or name in loop_names:
                    continue  # a(n, n) with do i = 1, n: n is an extent, not a leading dimension
                rows = _rows_of(kernel, a, k)
                if name in names_in_text(rows):
                    continue
                if name not in out or (out[name].startswith("max(") and not rows.startswith("max(")):
                    out[name] = rows
    return out


def _rows_of(kernel: ir.Kernel, arr: ir.Argument, dim: int) -> str:
    """The largest subscript of ``arr`` in ``dim``, as the end of the loop that runs it
    (``do i = 1, m`` ... ``a(i, j)`` -> ``m``); the max of the size arguments if unclear."""
    ends: list[str] = []
    for d in kernel.loops():
        for s in ir.walk(d.body):
            for e in all_exprs_of_stmt(s):
                for x in ir.walk_expr(e):
                    if isinstance(x, ir.ArrayRef) and x.name == arr.name and len(x.subscripts) > dim:
                        sub = x.subscripts[dim]
                        if isinstance(sub, ir.Name) and sub.name == d.var:
                            try:
                                ends.append(to_py(d.end))
                            except ValueError:
                                pass
    # an end the spec could not evaluate (a local: i1 = nx - 1; do k = i0, i1) says nothing
    scalars = {a.name for a in kernel.args if not a.rank}
    ends = sorted({e for e in ends if names_in_text(e) <= scalars})
    if len(ends) == 1:
        return ends[0]
    if ends:
        return f"max({', '.join(ends)})"
    sizes = sorted(size_candidates(kernel))
    return f"max({', '.join(sizes)}, 1)" if sizes else "1"


def names_in_text(expr: str) -> set[str]:
    import re
    return set(re.findall(r"[a-z_][a-z0-9_]*", expr)) - {"max", "min", "abs", "mod"}


def stride_args(kernel: ir.Kernel) -> set[str]:
    """Integer scalars used as loop steps or as increments of an index (``ix = ix + incx``),
    or named like BLAS strides (``inc*``)."""
    out: set[str] = set()
    ints = {a.name for a in scalars_of(kernel) if a.ftype.base == "integer"}
    for d in kernel.loops():
        if d.step is not None:
            out |= names_in(d.step) & ints
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and isinstance(s.value, ir.BinOp) \
                and s.value.op in "+-":
            l, r = s.value.left, s.value.right
            if isinstance(l, ir.Name) and l.name == s.target.name and isinstance(r, ir.Name) and r.name in ints:
                out.add(r.name)
    out |= {n for n in ints if n.startswith("inc")}
    return out


def size_candidates(kernel: ir.Kernel) -> set[str]:
    """Integer scalar arguments that bound loops or arrays, directly or through a local
    (``nincx = n*incx`` ... ``do i = 1, nincx``)."""
    ints = {a.name for a in scalars_of(kernel) if a.ftype.base == "integer"}
    marked = {a.name for a in scalars_of(kernel) if a.used_as_size}
    bounds = loop_bound_names(kernel) | dim_bound_names(kernel)
    defs: dict[str, set[str]] = {}
    for s in ir.walk(kernel.body):
        if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and s.target.name in kernel.locals:
            defs.setdefault(s.target.name, set()).update(names_in(s.value))
    seen: set[str] = set()
    todo = [n for n in bounds if n in defs]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for m in defs.get(n, ()):
            bounds.add(m)
            if m in defs:
                todo.append(m)
    return ints & (marked | bounds)


@dataclass
class PointerInfo:
    rows: str  # expression for the number of rows (segments)
    users: set[str] = field(default_factory=set)  # loop variables bounded by it


def pointer_arrays(kernel: ir.Kernel) -> dict[str, PointerInfo]:
    """Integer arrays used as segment pointers: ``do k = p(i), p(i+1)-1`` (CSR row pointers)."""
    out: dict[str, PointerInfo] = {}
    parents = _loop_parents(kernel)
    for d in kernel.loops():
        if not (isinstance(d.start, ir.ArrayRef) and len(d.start.subscripts) == 1):
            continue
        p = d.start.name
        try:
            arg = kernel.arg(p)
        except KeyError:
            continue
        if arg.ftype.base != "integer" or arg.rank != 1:
            continue
        if p not in names_in(d.end):
            continue
        sub = d.start.subscripts[0]
        rows = None
        if isinstance(sub, ir.Name):
            outer = parents.get(id(d), [])
            for o in reversed(outer):
                if o.var == sub.name:
                    try:
                        rows = to_py(o.end)
                    except ValueError:
                        rows = None
                    break
        if rows is None:
            dim = arg.dims[0]
            try:
                rows = f"{to_py(dim.upper)} - 1" if dim.upper is not None else "1"
            except ValueError:
                rows = "1"
        info = out.setdefault(p, PointerInfo(rows=rows))
        info.users.add(d.var)
    return out


@dataclass
class SegmentInfo:
    """A START array whose item ``s`` owns the segment ``start(s) .. start(s)+count(s)-1`` of
    other arrays (unstructured meshes: a material's corners, BookLeaf's ``imxfcp``/``imxncp``)."""
    count: str  # the integer array holding each item's segment length
    items: str  # expression for the number of items
    targets: set[tuple[str, int]] = field(default_factory=set)  # (array, dimension) the segments index
    total: str = ""  # the extent of that dimension: the room the segments share


def segment_arrays(kernel: ir.Kernel) -> dict[str, SegmentInfo]:
    """START/COUNT pairs of integer arrays (name of the start array -> info): a loop whose
    trip count is ``count(s)`` (``do v = 1, count(s)``, ``do v = start(s), start(s)+count(s)-1``)
    in which a subscript is the position ``start(s) + v - (loop start)``: directly, through a
    local set to it in the loop, or through a local set to ``start(s)`` just before the loop
    and stepped by 1 as the loop's last statement (``icp = icp + 1``). Only when every such
    subscript indexes a dimension of an argument declared ``1:extent`` (the extent, e.g.
    ``ncp``, is the room the segments share); neither array is written."""
    ints1 = {a.name for a in arrays_of(kernel) if a.ftype.base == "integer" and a.rank == 1
             and a.intent != "out"}
    ints1 -= {s.target.name for s in ir.walk(kernel.body) if isinstance(s, ir.Assign)
              and isinstance(s.target, ir.ArrayRef)}
    parents = _loop_parents(kernel)
    out: dict[str, SegmentInfo] = {}
    dropped: set[str] = set()
    for block in _blocks(kernel.body):
        for j, d in enumerate(block):
            if not isinstance(d, ir.Do) or d.step is not None:
                continue
            found = _segment_loop(kernel, block[:j], d, ints1)
            if found is None:
                continue
            start, count, sub, targets = found
            info = SegmentInfo(count=count, items=_items(kernel, parents.get(id(d), []), sub, count),
                               targets=targets)
            totals = set()
            for arr, k in targets:
                dim = kernel.arg(arr).dims[k]
                if dim.upper is None or (dim.lower is not None and _lin(dim.lower) != {(): 1}):
                    totals = None
                    break
                try:
                    totals.add(to_py(dim.upper))
                except ValueError:
                    totals = None
                    break
            if not totals:
                dropped.add(start)
                continue
            info.total = totals.pop() if len(totals) == 1 else f"min({', '.join(sorted(totals))})"
            old = out.get(start)
            if old is not None and (old.count != info.count or old.total != info.total):
                dropped.add(start)
            elif old is not None:
                old.targets |= info.targets
            else:
                out[start] = info
    counts = [i.count for i in out.values()]
    return {s: i for s, i in out.items() if s not in dropped and counts.count(i.count) == 1
            and i.count not in out}


def _blocks(body: list[ir.Stmt]):
    """Every statement list: the body, and each nested body, branch and case on its own."""
    yield body
    for s in body:
        if isinstance(s, (ir.Do, ir.DoWhile)):
            yield from _blocks(s.body)
        elif isinstance(s, ir.If):
            for _, b in s.branches:
                yield from _blocks(b)
            yield from _blocks(s.else_body)
        elif isinstance(s, ir.SelectCase):
            for c in s.cases:
                yield from _blocks(c.body)
        elif isinstance(s, ir.Where):
            yield from _blocks(s.body)
            yield from _blocks(s.elsewhere)


def _segment_loop(kernel: ir.Kernel, before: list[ir.Stmt], d: ir.Do, ints1: set[str]):
    """(start array, count array, their subscript's text, {(array, dim)}) of one loop over a
    segment; None when the loop is not one."""
    lo, hi = _lin(d.start), _lin(d.end)
    if lo is None or hi is None:
        return None
    trip = affine.add(hi, lo, -1)
    trip[()] = trip.get((), 0) + 1
    trip = {k: c for k, c in trip.items() if c}
    if len(trip) != 1:
        return None
    (key, coef), = trip.items()
    if coef != 1 or len(key) != 2 or key[0] not in ints1:
        return None
    count, sub = key
    # position of iteration v: start(s) + v - lo; a subscript p is one when p - v + lo == start(s)
    def start_of(p) -> Optional[str]:
        rest = {k: c for k, c in affine.add(affine.add(p, {(d.var,): 1}, -1), lo, 1).items() if c}
        if len(rest) == 1:
            (k, c), = rest.items()
            if c == 1 and len(k) == 2 and k[1] == sub and k[0] in ints1 and k[0] != count:
                return k[0]
        return None

    names: dict[str, tuple[str, int, int]] = {}  # local -> (start array, first, last statement index)
    last = d.body[-1] if d.body else None
    seen: set[str] = set()
    for st in reversed(before):  # icp = start(s) just before the loop, icp = icp + 1 last in it
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name not in seen:
            t, value = st.target.name, _lin(st.value)
            if t in kernel.locals and value is not None and len(value) == 1 \
                    and isinstance(last, ir.Assign) and isinstance(last.target, ir.Name) and last.target.name == t \
                    and _lin(last.value) == {(t,): 1, (): 1} \
                    and sum(1 for x in ir.walk(d.body) if _assigns(x, t)) == 1:
                (k, c), = value.items()
                if c == 1 and len(k) == 2 and k[1] == sub and k[0] in ints1 and k[0] != count:
                    names[t] = (k[0], 0, len(d.body) - 1)
        assigned = {x.target.name if isinstance(x, ir.Assign) else x.var for x in ir.walk([st])
                    if isinstance(x, ir.Do) or (isinstance(x, ir.Assign) and isinstance(x.target, ir.Name))}
        seen |= assigned
        if names_in_text(sub) & assigned:
            break
    for k, st in enumerate(d.body):  # t = start(s) + v - 1 inside the loop
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name in kernel.locals:
            p = _lin(st.value)
            s0 = start_of(p) if p is not None else None
            if s0 is not None and sum(1 for x in ir.walk(d.body) if _assigns(x, st.target.name)) == 1:
                names[st.target.name] = (s0, k + 1, len(d.body))
    found: dict[str, set[tuple[str, int]]] = {}
    for k, st in enumerate(d.body):
        for x in (e for s in ir.walk([st]) for root in all_exprs_of_stmt(s) for e in ir.walk_expr(root)):
            if not isinstance(x, ir.ArrayRef):
                continue
            for dim, p in enumerate(x.subscripts):
                lp = _lin(p) if not isinstance(p, ir.Slice) else None
                if lp is None:
                    continue
                s0 = start_of(lp)
                if s0 is None and len(lp) == 1 and next(iter(lp.values())) == 1:
                    (key1,) = lp
                    if len(key1) == 1 and key1[0] in names and names[key1[0]][1] <= k < names[key1[0]][2]:
                        s0 = names[key1[0]][0]
                if s0 is not None:
                    found.setdefault(s0, set()).add((x.name, dim))
    if len(found) != 1:
        return None
    start, targets = found.popitem()
    args = {a.name for a in kernel.args if a.rank}
    if not targets or any(arr not in args or arr in (start, count) for arr, _ in targets):
        return None
    return start, count, sub, targets


def _assigns(st: ir.Stmt, name: str) -> bool:
    return (isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name == name) or (
        isinstance(st, ir.Do) and st.var == name)


def _items(kernel: ir.Kernel, outer: list[ir.Do], sub: str, count: str) -> str:
    """The number of items: the end of the enclosing loop over the subscript, else the count
    array's declared extent."""
    for o in reversed(outer):
        if o.var == sub and _lin(o.start) == {(): 1}:
            try:
                return to_py(o.end)
            except ValueError:
                break
    dim = kernel.arg(count).dims[0]
    try:
        return to_py(dim.upper) if dim.upper is not None and _lin(dim.lower or ir.Literal(1)) == {(): 1} else "1"
    except ValueError:
        return "1"


def _lin(e: ir.Expr) -> Optional[dict[tuple, int]]:
    """An integer expression as a sum of terms (term -> coefficient): ``()`` the constant,
    ``(name,)`` a scalar, ``(array, subscript text)`` an element of a rank-1 array; None for
    anything else."""
    if isinstance(e, ir.Literal):
        return {(): e.value} if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, ir.Name):
        return {(e.name,): 1}
    if isinstance(e, ir.ArrayRef) and len(e.subscripts) == 1:
        try:
            return {(e.name, to_py(e.subscripts[0])): 1}
        except ValueError:
            return None
    if isinstance(e, ir.UnaryOp) and e.op in "+-":
        v = _lin(e.operand)
        return None if v is None else affine.add({}, v, 1 if e.op == "+" else -1)
    if isinstance(e, ir.BinOp) and e.op in ("+", "-"):
        a, b = _lin(e.left), _lin(e.right)
        return None if a is None or b is None else affine.add(a, b, 1 if e.op == "+" else -1)
    if isinstance(e, ir.BinOp) and e.op == "*":
        a, b = _lin(e.left), _lin(e.right)
        if a is None or b is None:
            return None
        for x, y in ((a, b), (b, a)):
            if set(x) <= {()}:
                return affine.add({}, y, x.get((), 0))
    return None


def _loop_parents(kernel: ir.Kernel) -> dict[int, list[ir.Do]]:
    out: dict[int, list[ir.Do]] = {}

    def rec(body: list[ir.Stmt], stack: list[ir.Do]) -> None:
        for s in body:
            if isinstance(s, ir.Do):
                out[id(s)] = list(stack)
                rec(s.body, stack + [s])
            else:
                rec(ir.children(s), stack)

    rec(kernel.body, [])
    return out


NONNEG_CALLS = {"sqrt", "dsqrt", "abs", "dabs", "cabs", "zabs", "exp", "dexp"}
_ORDER = ("<", "<=", ">", ">=")


def _nonneg(e: ir.Expr, held: set[str]) -> bool:
    """``e`` is never negative: a non-negative literal, a local in ``held``, sqrt/abs/exp,
    a square, and sums, products, quotients and maxima of such."""
    if isinstance(e, ir.Literal):
        return isinstance(e.value, (int, float)) and not isinstance(e.value, bool) and e.value >= 0
    if isinstance(e, ir.Name):
        return e.name in held
    if isinstance(e, ir.FuncCall) and e.intrinsic:
        if e.name in NONNEG_CALLS:
            return True
        if e.name in ("max", "dmax1", "amax1"):
            return any(_nonneg(a, held) for a in e.args)
        if e.name in ("min", "dmin1", "amin1"):
            return all(_nonneg(a, held) for a in e.args)
        return False
    if isinstance(e, ir.BinOp):
        if e.op == "*" and expr_str(e.left) == expr_str(e.right):
            return True
        if e.op == "**":
            r = e.right
            return (isinstance(r, ir.Literal) and isinstance(r.value, int) and r.value % 2 == 0) or _nonneg(e.left, held)
        if e.op in ("+", "*", "/"):
            return _nonneg(e.left, held) and _nonneg(e.right, held)
    return False


def nonneg_locals(kernel: ir.Kernel) -> set[str]:
    """Locals every value of which is non-negative: each assignment of them is
    (:func:`_nonneg`, a greatest fixed point: ``s = s + x*x`` stays), and nothing else sets
    them (an actual argument of a call, a DO variable, a READ)."""
    dummies = {a.name for a in kernel.args}
    defs: dict[str, list[ir.Expr]] = {}
    other: set[str] = set()
    for st in ir.walk(kernel.body):
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name):
            defs.setdefault(st.target.name, []).append(st.value)
        elif isinstance(st, ir.Do):
            other.add(st.var)
        elif isinstance(st, ir.CallStmt):
            other |= {a.name for a in st.args if isinstance(a, ir.Name)}
        elif isinstance(st, ir.Unsupported):
            other |= set(st.writes or ())
    held = {n for n in defs if n not in dummies and n not in other}
    changed = True
    while changed:
        changed = False
        for n in sorted(held):
            if not all(_nonneg(v, held) for v in defs[n]):
                held.discard(n)
                changed = True
    return held


def positive_args(kernel: ir.Kernel) -> set[str]:
    """Real arguments whose values reach sqrt/log (or a divisor), or that are compared with
    (<, <=, >, >=) a value that is never negative (a tolerance against a norm, CCS-QCD's
    ``rnorm <= tol`` with ``rnorm = sqrt(rtmp0)/rsource``: drawn negative, the solver never
    converges and runs to its iteration limit): generate them positive."""
    reals = {a.name for a in kernel.args if a.ftype.base in ("real", "complex")}
    out: set[str] = set()
    held: Optional[set[str]] = None
    for e in kernel_exprs(kernel):
        if isinstance(e, ir.BinOp) and e.op in _ORDER:
            for mine, other in ((e.left, e.right), (e.right, e.left)):
                if isinstance(mine, ir.Name) and mine.name in reals:
                    held = nonneg_locals(kernel) if held is None else held
                    if _nonneg(other, held):
                        out.add(mine.name)
        if isinstance(e, ir.FuncCall) and e.name in SQRT_LIKE:
            for a in e.args:
                out |= names_in(a) & reals
        if isinstance(e, ir.BinOp) and e.op == "/":
            out |= names_in(e.right) & reals
        if isinstance(e, ir.BinOp) and e.op == "**" and not (
                isinstance(e.right, ir.Literal) and isinstance(e.right.value, int)):
            out |= names_in(e.left) & reals
    return out


def has_reduction(kernel: ir.Kernel) -> bool:
    """True when some loop accumulates into a scalar or an element invariant in the loop
    (a port may reorder those sums)."""
    for d in kernel.loops():
        if d.info.reductions:
            return True
        varying = {d.var} | {s.target.name for s in ir.walk(d.body)
                             if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name)}
        varying |= {x.var for x in ir.walk(d.body) if isinstance(x, ir.Do)}
        for s in ir.walk(d.body):
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.BinOp) and s.value.op in "+-*":
                t = s.target
                if isinstance(t, ir.Name) and t.name in names_in(s.value) and t.name != d.var:
                    return True
                if isinstance(t, ir.ArrayRef) and not (names_in(t) - {t.name}) & varying and any(
                        isinstance(x, ir.ArrayRef) and x.name == t.name for x in ir.walk_expr(s.value)):
                    return True
                # a running sum through the array, s(i) = s(i-1) + x(i): a port may sum it as a
                # prefix sum in another order
                if isinstance(t, ir.ArrayRef) and s.value.op in "+-" and any(
                        isinstance(x, ir.ArrayRef) and x.name == t.name
                        and [expr_str(a) for a in x.subscripts] != [expr_str(a) for a in t.subscripts]
                        for x in ir.walk_expr(s.value)):
                    return True
    return False


def count_flops(kernel: ir.Kernel, env: dict, branches: str = "exact") -> Optional[int]:
    """Floating-point +,-,*,/ times trip counts, when every loop that holds real arithmetic
    has a trip count computable from ``env``; None otherwise. With ``branches='exact'``
    arithmetic under an IF makes the count unknown (None); with ``'max'`` the costliest arm
    counts (an estimate of the work, used to cap timing sizes)."""
    total = 0

    def ops(e: ir.Expr) -> int:
        n = 0
        for x in ir.walk_expr(e):
            if isinstance(x, ir.BinOp) and x.op in ("+", "-", "*", "/") and x.ftype is not None \
                    and x.ftype.base in ("real", "complex"):
                n += 1
        return n

    def rec(body: list[ir.Stmt], mult: int) -> bool:
        nonlocal total
        for s in body:
            if isinstance(s, ir.Assign):
                total += mult * ops(s.value)
            elif isinstance(s, ir.Do):
                try:
                    lo, hi = ir.evaluate(s.start, env), ir.evaluate(s.end, env)
                    st = ir.evaluate(s.step, env) if s.step is not None else 1
                except (KeyError, ValueError, TypeError, ZeroDivisionError):
                    if any(isinstance(x, ir.Assign) and ops(x.value) for x in ir.walk(s.body)):
                        return False
                    continue
                trips = max(0, (hi - lo + st) // st) if st else 0
                if not rec(s.body, mult * trips):
                    return False
            elif isinstance(s, (ir.If, ir.SelectCase)) and branches == "max":
                arms = [b for _, b in s.branches] + [s.else_body] if isinstance(s, ir.If) \
                    else [c.body for c in s.cases]
                before, best = total, 0
                for arm in arms:
                    total = 0
                    if not rec(arm, mult):
                        total = before
                        return False
                    best = max(best, total)
                total = before + best
            elif isinstance(s, (ir.If, ir.SelectCase, ir.Where, ir.DoWhile)):
                if any(isinstance(x, ir.Assign) and ops(x.value) for x in ir.walk(ir.children(s))):
                    return False
        return True

    if not rec(kernel.body, 1):
        return None
    return total or None
