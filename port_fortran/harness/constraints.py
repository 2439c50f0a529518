"""Orderings the kernel implies between its size arguments, and size sets that respect them
(pure).

Random size sets ignore how a routine relates its integer arguments: TeaLeaf's
``tea_block_init(x_min, x_max, y_min, y_max, ...)`` got ``x_min=7 x_max=5``, every loop ran
zero times and there was nothing to compare. The code says what it expects:

- ``loop``: ``do i = lo, hi`` over a bound pair (``lo`` an argument too: ``x_min, x_max``;
  step absent or a positive literal, ``hi, lo`` for a negative one) should run,
  ``hi - lo >= 0`` (a loop from a constant, ``do i = 2, n``, may run zero times: ``n = 1`` is
  a case worth testing);
- ``extent``: a declared dimension ``lo:hi`` of an array argument is not empty;
- ``subscript``: an array argument's unconditional reference stays in its declared bounds
  over the loop ranges around it (``do k = 1, depth`` ... ``a(x_min - k)`` with ``a`` declared
  from ``x_min - halo``: ``depth <= halo``);
- ``divisor``: an integer argument the code divides by (``/ n``, ``mod(i, n)``) is >= 1;
- ``accepts``: the routine or a callee ends the program on an argument check
  (``if (np > 84) then ... call exitt``, ``fortran/error_exits.py``): its inputs keep the
  condition false (``np <= 84``), at the timing sizes too;
- ``runs`` (a preference): a loop from a constant, ``do k = 1, depth``, runs at least once
  -- kept only for size sets drawn that way (``n = 1`` for ``do i = 2, n`` stays a case) and
  dropped when the other constraints cannot be met with it. Without it a repair meeting
  ``a(1 - k)`` with ``a`` declared from ``y_min - 2`` moved ``depth`` below zero, and the
  halo loops ran on none of the cases.

References under a branch count when the branch reads only the routine's inputs (flags,
neighbour codes: the harness gives each such comparison both sides, so the branch is
taken on some case); those under a branch on a loop variable or on computed data do not.

Each is a linear inequality ``poly >= 0`` over the integer scalar arguments (locals assigned
once from them and PARAMETERs substituted); what is not linear is left out. :class:`Ordering`
repairs a size set: a ``loop``/``extent`` constraint over a bound pair raises its upper side,
reading the number the size set drew for that argument as the *extent* (``x_max = x_min + 5 - 1``
for a drawn 5); a ``subscript`` constraint moves the index side to the nearest value in
bounds; repeated until every constraint holds (bounded), else the size set is kept as drawn
and a note says which constraint could not be met.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..fortran import affine
from ..fortran import ir
from ..fortran.rewrite import replace_refs

MAX_PASSES = 20
KIND_ORDER = ("loop", "extent", "subscript", "divisor", "accepts", "runs")


@dataclass
class Constraint:
    poly: dict  # linear Poly: () -> constant, (name,) -> coefficient; holds when value >= 0
    kind: str
    line: int
    text: str  # for notes: 'x_max >= x_min (loop at line 12)'
    index_side: frozenset = frozenset()  # subscript: the variables of the subscript (moved first)
    pair: bool = False  # loop/extent whose lower side is an argument too: a bound pair (x_min:x_max)

    def names(self) -> set[str]:
        return affine.names(self.poly)

    def value(self, env: dict[str, int]) -> int:
        return sum(c * (env[k[0]] if k else 1) for k, c in self.poly.items())


def element_name(array: str, subscripts) -> str:
    """The variable constraints use for one element of an integer array the kernel reads at
    constant subscripts: 'grid_points(1)'."""
    return f"{array}({','.join(str(int(s)) for s in subscripts)})"


def _linear(p: Optional[dict]) -> bool:
    return p is not None and all(len(k) <= 1 for k in p)


def _text(p: dict) -> str:
    """``p >= 0`` as 'upper >= lower' (positive terms left, negative right)."""
    def side(terms):
        parts = [(f"{abs(c)}*{k[0]}" if abs(c) != 1 else k[0]) if k else str(abs(c)) for k, c in terms]
        return " + ".join(parts) or "0"
    pos = sorted(((k, c) for k, c in p.items() if c > 0), key=lambda x: (not x[0], x[0]))
    neg = sorted(((k, c) for k, c in p.items() if c < 0), key=lambda x: (not x[0], x[0]))
    return f"{side(pos)} >= {side(neg)}"


class _Collector:
    def __init__(self, kernel: ir.Kernel):
        self.kernel = kernel
        self.ints = {a.name for a in kernel.args if a.rank == 0 and a.ftype.base == "integer"}
        self.arrays = {a.name: a for a in kernel.args if a.rank}
        # local arrays of constant shape bound the sizes too (NPB MG's line buffers r1(m):
        # 'do i1 = 1, n1' then r1(i1) asks n1 <= m)
        for n, v in kernel.locals.items():
            if v.dims and v.parameter is None and not v.allocatable and v.common is None and n not in self.arrays \
                    and all(d.upper is not None and not getattr(d, "assumed_shape", False) for d in v.dims):
                self.arrays[n] = v
        # elements of integer arrays the kernel only reads, at constant subscripts
        # (NPB's 'do i = 1, grid_points(1) - 2'): variables like the scalars, 'grid_points(1)'
        self.elem_arrays = {a.name for a in kernel.args if a.rank and a.ftype.base == "integer" and a.intent == "in"}
        self.params = {n: v.parameter for n, v in kernel.locals.items()
                       if isinstance(v.parameter, int) and not isinstance(v.parameter, bool)}
        self.defs: dict[str, dict] = {}
        self.defs = self._single_defs()
        assigned = {x.target.name for x in ir.walk(kernel.body) if isinstance(x, ir.Assign) and isinstance(x.target, ir.Name)}
        assigned |= {x.var for x in ir.walk(kernel.body) if isinstance(x, ir.Do)}
        self.fixed_scalars = {a.name for a in kernel.args if a.rank == 0} - assigned  # inputs the routine keeps
        self.out: list[Constraint] = []

    def _single_defs(self) -> dict[str, dict]:
        """Locals assigned exactly once, at the routine's top level, from a linear expression
        of the arguments: substituted into bounds and subscripts."""
        count: dict[str, int] = {}
        for s in ir.walk(self.kernel.body):
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name):
                count[s.target.name] = count.get(s.target.name, 0) + 1
            elif isinstance(s, ir.Do):
                count[s.var] = count.get(s.var, 0) + 1
        out: dict[str, dict] = {}
        for s in self.kernel.body:
            if isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and count.get(s.target.name) == 1 \
                    and s.target.name not in self.ints and s.target.name in self.kernel.locals:
                p = self.poly(s.value)
                if p is not None:
                    out[s.target.name] = p
        return out

    def poly(self, e: Optional[ir.Expr], loop_vars: frozenset = frozenset()) -> Optional[dict]:
        """Linear polynomial of ``e`` in integer scalar arguments (and ``loop_vars``)."""
        if e is None:
            return None
        if self.elem_arrays:
            e = replace_refs(e, self._element)
        p = affine.poly_of(e, self.params)
        if not _linear(p):
            return None
        for n in list(affine.names(p)):
            if n in self.ints or n in loop_vars:
                continue
            if n in self.defs:
                p = affine.substitute(p, n, self.defs[n])
            else:
                return None
        return p if _linear(p) else None

    def _element(self, x: ir.ArrayRef) -> Optional[ir.Expr]:
        if x.name not in self.elem_arrays or not x.subscripts:
            return None
        subs = []
        for sub in x.subscripts:
            q = affine.poly_of(sub, self.params) if not isinstance(sub, ir.Slice) else None
            if q is None or not affine.is_const(q):
                return None
            subs.append(affine.constant(q))
        name = element_name(x.name, subs)
        self.ints.add(name)
        return ir.Name(name, ftype=ir.INTEGER)

    def add(self, p: Optional[dict], kind: str, line: int, what: str, index_side=frozenset(),
            pair: bool = False) -> None:
        if p is None or not (affine.names(p) & self.ints):
            return  # nothing a size set can move
        if any(n not in self.ints for n in affine.names(p)):
            return
        text = f"{_text(p)} ({what} at line {line})"
        if not any(c.poly == p and c.kind == kind for c in self.out):
            self.out.append(Constraint(dict(p), kind, line, text, frozenset(index_side), pair))

    def collect(self) -> list[Constraint]:
        for a in self.arrays.values():
            for d in a.dims:
                if d.upper is None or d.assumed_shape:
                    continue
                lo = self.poly(d.lower) if d.lower is not None else affine.const(1)
                hi = self.poly(d.upper)
                if lo is not None and hi is not None:
                    self.add(affine.add(hi, lo, -1), "extent", a.line, f"dimension of {a.name}",
                             pair=bool(affine.names(lo) & self.ints))
        self._walk(self.kernel.body, [], False)
        for e in _exprs(self.kernel.body):
            for x in ir.walk_expr(e):
                div = None
                if isinstance(x, ir.BinOp) and x.op == "/" and x.ftype is not None and x.ftype.base == "integer":
                    div = x.right
                elif isinstance(x, ir.FuncCall) and x.name in ("mod", "modulo") and len(x.args) == 2:
                    div = x.args[1]
                if isinstance(div, ir.Name) and div.name in self.ints:
                    self.add(affine.add(affine.var(div.name), affine.const(-1)), "divisor", 0, f"divisor {div.name}")
        for cond, line, what in getattr(self.kernel, "accepts", None) or []:
            for p in self._not(cond):
                self.add(p, "accepts", line, what)
        self.out.sort(key=lambda c: KIND_ORDER.index(c.kind))
        return self.out

    def _not(self, cond: ir.Expr) -> list[dict]:
        """Linear conditions (``p >= 0``) that together keep ``cond`` false: an error
        exit's condition (``np > 84``: ``84 - np >= 0``; ``a .or. b``: both sides false;
        ``n /= m``: n == m); none for what they cannot say (``.and.``, ``==``)."""
        if not isinstance(cond, ir.BinOp):
            return []
        if cond.op == "or":
            return self._not(cond.left) + self._not(cond.right)
        spread = _spread(cond)
        if spread:  # lda < max(1, m): false when lda is at least each of them
            return [p for c in spread for p in self._not(c)]
        a, b = self.poly(cond.left), self.poly(cond.right)
        if a is None or b is None:
            return []
        if cond.op in (">", ">="):  # keep a <= b (a < b)
            return [affine.add(affine.add(b, a, -1), affine.const(-1 if cond.op == ">=" else 0))]
        if cond.op in ("<", "<="):
            return [affine.add(affine.add(a, b, -1), affine.const(-1 if cond.op == "<=" else 0))]
        if cond.op == "/=":
            return [affine.add(a, b, -1), affine.add(b, a, -1)]
        return []

    def _walk(self, body: list[ir.Stmt], loops: list[tuple[str, dict, dict]], conditional: bool) -> None:
        for s in body:
            if isinstance(s, ir.Do):
                step = 1
                if s.step is not None:
                    st = self.poly(s.step)
                    step = affine.constant(st) if st is not None and affine.is_const(st) else 0
                vars_ = frozenset(v for v, _, _ in loops)
                lo, hi = self.poly(s.start, vars_), self.poly(s.end, vars_)
                if step < 0:
                    lo, hi = hi, lo
                if not conditional and step != 0 and lo is not None and hi is not None \
                        and affine.names(lo) & self.ints and not (affine.names(lo) | affine.names(hi)) & vars_:
                    # a bound pair (do j = x_min, x_max): it should run; a loop from a constant
                    # (do i = 2, n) may run zero times, as at n = 1, on purpose
                    self.add(affine.add(hi, lo, -1), "loop", s.line, f"do {s.var}", pair=True)
                elif not conditional and step > 0 and lo is not None and hi is not None and affine.is_const(lo) \
                        and affine.names(hi) & self.ints and not affine.names(hi) & vars_:
                    self.add(affine.add(hi, lo, -1), "runs", s.line, f"do {s.var}")
                self._refs(s, [ir.stmt_exprs(s)], loops, conditional)
                inner = loops + [(s.var, lo, hi)] if step != 0 and lo is not None and hi is not None else loops
                self._walk(s.body, inner, conditional)
                continue
            if isinstance(s, (ir.If, ir.SelectCase, ir.Where, ir.DoWhile)):
                self._refs(s, [ir.stmt_exprs(s)], loops, conditional)
                # a branch on the routine's inputs alone (a flag, a neighbour code, a
                # mode) is taken whole on some case -- the harness gives every such
                # comparison both sides -- so its references must stay in bounds too; one
                # on a loop's variable or on computed data may be what keeps them in
                self._walk(ir.children(s), loops, conditional or not self._mode_switch(s, loops))
                continue
            self._refs(s, [ir.stmt_exprs(s)], loops, conditional)
            kids = ir.children(s)
            if kids:
                self._walk(kids, loops, conditional)

    def _mode_switch(self, s: ir.Stmt, loops) -> bool:
        """Is ``s`` an IF or SELECT CASE whose conditions read only literals, constants,
        scalar arguments the routine never assigns and elements of its integer input
        arrays at constant subscripts -- nothing a loop or the computation changes?"""
        if not isinstance(s, (ir.If, ir.SelectCase)):
            return False
        loop_vars = {v for v, _, _ in loops}
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.ArrayRef):
                    if x.name not in self.elem_arrays or self._element(x) is None:
                        return False
                elif isinstance(x, ir.FuncCall) and not x.intrinsic:
                    return False
                elif isinstance(x, ir.Name) and (x.name in loop_vars or (
                        x.name not in self.fixed_scalars
                        and getattr(self.kernel.locals.get(x.name), "parameter", None) is None)):
                    return False
        return True

    def _refs(self, s: ir.Stmt, exprs, loops, conditional: bool) -> None:
        if conditional:
            return
        vars_ = frozenset(v for v, _, _ in loops)
        for group in exprs:
            for e in group:
                for x in ir.walk_expr(e):
                    if not isinstance(x, ir.ArrayRef) or x.name not in self.arrays:
                        continue
                    a = self.arrays[x.name]
                    if len(x.subscripts) != a.rank:
                        continue
                    for d, sub in zip(a.dims, x.subscripts):
                        if isinstance(sub, ir.Slice):
                            continue
                        p = self.poly(sub, vars_)
                        if p is None:
                            continue
                        smin, smax = affine.extreme(p, loops, -1), affine.extreme(p, loops, +1)
                        lo = self.poly(d.lower) if d.lower is not None else affine.const(1)
                        if smin is not None and lo is not None:
                            self.add(affine.add(smin, lo, -1), "subscript", s.line, f"{x.name} lower bound",
                                     affine.names(smin) & self.ints)
                        if d.upper is not None and not d.assumed_shape:
                            hi = self.poly(d.upper)
                            if smax is not None and hi is not None:
                                self.add(affine.add(hi, smax, -1), "subscript", s.line, f"{x.name} upper bound",
                                         affine.names(smax) & self.ints)


def _exprs(body: list[ir.Stmt]):
    for s in ir.walk(body):
        yield from ir.stmt_exprs(s)


def _spread(cond: ir.BinOp) -> list[ir.BinOp]:
    """A comparison with MAX or MIN on the side that makes it one comparison per argument:
    ``a < max(b, c)`` (and ``max(b, c) > a``) holds when ``a < b`` or ``a < c``; ``a > min(b, c)``
    when ``a > b`` or ``a > c``; [] for any other."""
    def call(e, name):
        return isinstance(e, ir.FuncCall) and e.intrinsic and e.name == name and len(e.args) >= 2
    flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
    if cond.op not in flip:
        return []
    op, left, right = cond.op, cond.left, cond.right
    if call(left, "max") or call(left, "min"):  # max(b, c) > a is a < max(b, c)
        op, left, right = flip[op], right, left
    if (op in ("<", "<=") and call(right, "max")) or (op in (">", ">=") and call(right, "min")):
        return [ir.BinOp(op, left, x, ftype=cond.ftype) for x in right.args]
    return []


def bound_sides(kernel: ir.Kernel) -> dict[str, set[str]]:
    """The integer variables (scalar arguments, COMMON and module members, elements of
    integer arrays at constant subscripts: 'grid_points(1)') that bound DO loops, each with
    the side it is on: 'upper' when a larger value gives more iterations (``do i = 1, n - 2``),
    'lower' when it gives fewer (``do i = ist, ...``). Locals assigned once from them
    (``isize = grid_points(1) - 1``) count as them."""
    col = _Collector(kernel)
    out: dict[str, set[str]] = {}
    for d in kernel.loops():
        step = 1
        if d.step is not None:
            st = col.poly(d.step)
            if st is None or not affine.is_const(st) or affine.constant(st) == 0:
                continue
            step = affine.constant(st)
        for e, sign in ((d.start, -1), (d.end, +1)):
            p = col.poly(e, frozenset(x.var for x in kernel.loops()))
            if p is None:
                continue
            for (k, c) in p.items():
                if k and k[0] in col.ints and c:
                    more = (c > 0) if sign > 0 else (c < 0)  # a larger value: more iterations
                    if step < 0:
                        more = not more
                    out.setdefault(k[0], set()).add("upper" if more else "lower")
    return out


def constraints(kernel: ir.Kernel) -> list[Constraint]:
    """Every ordering constraint the kernel implies (see the module docstring)."""
    return _Collector(kernel).collect()


@dataclass
class Ordering:
    """The constraints that only involve ``movable`` arguments (the size arguments a size
    set holds; others are drawn later or fixed by the configuration)."""
    constraints: list[Constraint]
    movable: set[str]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, kernel: ir.Kernel, sizes, fixed=()) -> "Ordering":
        sizes, fixed = set(sizes), set(fixed)
        cons = [c for c in constraints(kernel) if c.names() <= sizes and c.names() - fixed]
        return cls(cons, sizes - fixed)

    def satisfy(self, sizes: dict[str, int]) -> dict[str, int]:
        """``sizes`` moved to meet every constraint. The number a size set gives the upper
        side of a bound pair is read as its extent (``x_min=7 x_max=5``: x_max = 11,
        five iterations; ``x_min = x_max = s``: x_max = 2s - 1); when that does not settle,
        plain feasibility (at least one iteration); when neither does, the set as drawn and
        a note."""
        if not self.constraints:
            return dict(sizes)
        hard = [c for c in self.constraints if c.kind != "runs"]
        soft = [c for c in self.constraints if c.kind == "runs" and c.value(sizes) >= 0]
        for cons in ([hard + soft, hard] if soft else [hard]):
            for extent in (True, False):
                for index_first in (True, False):  # out of bounds: move the subscript, else the bounds
                    got = self._solve(sizes, extent, index_first, cons)
                    if got is not None:
                        return got
        bad = [c.text for c in hard if c.value(sizes) < 0]
        note = f"sizes {_show(sizes)} break {'; '.join(bad[:3])}, and no size set near it meets every constraint"
        if note not in self.notes:
            self.notes.append(note)
        return dict(sizes)

    def _solve(self, drawn: dict[str, int], extent: bool, index_first: bool = True,
               cons: Optional[list] = None) -> Optional[dict[str, int]]:
        env = dict(drawn)
        for _ in range(MAX_PASSES):
            moved = False
            for c in (self.constraints if cons is None else cons):
                v = c.value(env)
                name, coef = _pick(c, self.movable, index_first)
                want = 0
                if extent and name is not None and c.pair and coef > 0:
                    want = max(0, drawn[name] - 1) * coef
                if v >= want:
                    continue
                if name is None:
                    return None
                step = -(-(want - v) // abs(coef))  # ceil
                env[name] += step if coef > 0 else -step
                moved = True
            if not moved:
                return env
        return None


def _pick(c: Constraint, movable: set[str], index_first: bool = True) -> tuple[Optional[str], int]:
    """Which variable to move: a subscript's own variables first (``index_first``) or the
    array's bounds first; otherwise the upper side (positive coefficient; a bound itself,
    coefficient 1, before a width counted twice), then the lower side."""
    terms = [(k[0], v) for k, v in c.poly.items() if k and k[0] in movable]
    if not terms:
        return None, 0
    if c.kind == "subscript":
        own = [t for t in terms if (t[0] in c.index_side) == index_first]
        if own:
            return own[0]
    terms.sort(key=lambda t: (t[1] < 0, abs(t[1]), t[0]))
    return terms[0]


def _show(sizes: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


_CACHE: dict[int, tuple[ir.Kernel, list[Constraint]]] = {}


def cached_constraints(kernel: ir.Kernel) -> list[Constraint]:
    """:func:`constraints`, computed once per kernel object (inputs are made per case)."""
    hit = _CACHE.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    if len(_CACHE) > 64:
        _CACHE.clear()
    cons = constraints(kernel)
    _CACHE[id(kernel)] = (kernel, cons)
    return cons


def scalar_bounds(kernel: ir.Kernel, name: str, known: dict[str, int]) -> tuple[Optional[int], Optional[int]]:
    """The interval the constraints leave an integer scalar drawn at random (a subscript
    offset, a halo depth that only appears in subscripts), given the values of the others:
    (lowest, highest), None where unbounded."""
    lo: Optional[int] = None
    hi: Optional[int] = None
    for c in cached_constraints(kernel):
        if c.kind == "runs":
            continue  # a preference of size sets only
        coef = c.poly.get((name,), 0)
        if not coef or not (c.names() - {name}) <= set(known):
            continue
        rest = sum(v * (known[k[0]] if k else 1) for k, v in c.poly.items() if k != (name,))
        if coef > 0:  # coef * x + rest >= 0
            b = -(rest // coef)  # ceil(-rest / coef)
            lo = b if lo is None else max(lo, b)
        else:
            b = rest // -coef
            hi = b if hi is None else min(hi, b)
    return lo, hi


def equal_reals(kernel: ir.Kernel) -> list[tuple[str, str]]:
    """Pairs of REAL scalar arguments an error exit needs equal (``accepts``: the Livermore
    loops' WATCH stops when two copies of a clock differ, ``testov .NE. ticks``): the harness
    gives the second the first's value. An or'ed condition counts part by part."""
    from ..fortran.error_exits import or_parts
    reals = {a.name for a in kernel.args if a.rank == 0 and a.ftype.base == "real"}
    out: list[tuple[str, str]] = []
    for cond, _line, _what in getattr(kernel, "accepts", None) or []:
        for p in or_parts(cond):
            if isinstance(p, ir.BinOp) and p.op == "/=" and isinstance(p.left, ir.Name) and \
                    isinstance(p.right, ir.Name) and {p.left.name, p.right.name} <= reals:
                pair = (p.left.name, p.right.name)
                if pair not in out and pair[0] != pair[1]:
                    out.append(pair)
    return out
