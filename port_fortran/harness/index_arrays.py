"""Index arrays: integer array arguments whose values subscript other arrays, so the
harness draws them within the arrays they index (pure over the IR; ``ir_facts`` re-exports
:func:`index_arrays`)."""
from __future__ import annotations

from typing import Optional

from ..fortran import ir

all_exprs_of_stmt = ir.stmt_exprs


def _int_arrays(kernel: ir.Kernel) -> set[str]:
    return {a.name for a in kernel.args if a.rank > 0 and a.ftype.base == "integer"}


def index_arrays(kernel: ir.Kernel) -> dict[str, list[tuple[str, int, int]]]:
    """Integer array arguments whose values are used as subscripts: name -> list of
    (indexed array, dimension, constant offset added to the value). Directly
    (``x(idx(i))``) or through a local scalar whose every value there comes from such an
    element or its absolute value (``iel = ielsort(ii)``, then ``elv0(iel)``: BookLeaf's
    connectivity loops). Which assignments reach each use is the routine's control flow's to
    say (``dataflow.reaching_defs``): a scalar reused for other work later (``ins`` holding a
    face code, then an element number) marks each array only for the uses its values reach;
    a use that some other value may reach (a count, a DO variable) marks none; a copy of such
    a local (``next = nextp`` after ``nextp = p(next)``: Nekbone's in-place permutations)
    holds what the copied local holds there. A
    value wrapped by MOD/MODULO before it subscripts (``ins = ielfc(is, iel)``,
    ``ins = MOD(ins, NFACE) + 1``, or ``MOD(ifcl + icn, NCORN) + 1``: the face or corner after
    the one an index array names) counts with offset 0: drawn within the indexed extent, its
    MOD stays there too, where drawn from [-5, 5] a negative code gave subscript 0.
    What draws the inputs, not a proof: a value out of range is still caught by the
    checking build of the original."""
    from ..fortran.dataflow import FlowGraph

    ints = _int_arrays(kernel)
    if not ints:
        return {}
    dummies = {a.name for a in kernel.args}
    defs: dict[str, list[ir.Assign]] = {}
    for st in ir.walk(kernel.body):
        if isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name not in dummies:
            defs.setdefault(st.target.name, []).append(st)
    # a local is a candidate when some assignment of it is an index form (to a fixed point:
    # a wrapped value may read another candidate); only candidates are looked up below
    cand: set[str] = set()
    changed = True
    while changed:
        changed = False
        for t, sts in defs.items():
            if t not in cand and any(_index_sources(st.value, ints, lambda n, _s: [("", 0)] if n in cand else [])
                                     or _name_offset(st.value)[0] in cand for st in sts):
                cand.add(t)
                changed = True
    if cand:
        graph = FlowGraph(kernel.body)
    memo: dict[tuple[int, str], list[tuple[str, int]]] = {}

    def reaching(name: str, at: ir.Stmt) -> list[tuple[str, int]]:
        """The index arrays (offsets) local ``name`` holds on entry to ``at``."""
        if name not in cand:
            return []
        key = (id(at), name)
        if key in memo:
            return memo[key]
        memo[key] = []  # a cycle through a loop: what the other paths give
        try:
            found = graph.reaching_defs(at, name)
        except KeyError:  # a statement the graph does not model on its own
            found = None
        sts = found if found is not None else defs.get(name, [])  # may be unset: every assignment
        out: list[tuple[str, int]] = []
        for st in sts:
            mine = isinstance(st, ir.Assign) and isinstance(st.target, ir.Name) and st.target.name == name
            got = _index_sources(st.value, ints, reaching, st) if mine else None
            copied, shift = _name_offset(st.value) if mine and got is None else (None, 0)
            if copied is not None and copied != name:  # a copy: what the copied local holds there
                got = [(arr, off + shift) for arr, off in reaching(copied, st)] or None
            if got is None:  # some value there is no index (a copy, a count, a DO variable)
                out = []
                break
            out += [x for x in got if x not in out]
        memo[key] = out
        return out

    out: dict[str, list[tuple[str, int, int]]] = {}
    for st in ir.walk(kernel.body):
        for top in all_exprs_of_stmt(st):
            for e in ir.walk_expr(top):
                if not isinstance(e, ir.ArrayRef):
                    continue
                for k, sub in enumerate(e.subscripts):
                    srcs = _index_sources(sub, ints, reaching, st)
                    if not srcs:
                        name, off = _name_offset(sub)
                        srcs = [(arr, off0 + off) for arr, off0 in reaching(name, st)] if name else []
                    for arr, off in srcs:
                        if arr != e.name:
                            out.setdefault(arr, []).append((e.name, k, off))
    return out


def _mod_inner(e: ir.Expr) -> Optional[ir.Expr]:
    """X of ``MOD(X, m)``, ``MODULO(X, m)``, either ``+/- c``; None for other forms."""
    if isinstance(e, ir.BinOp) and e.op in "+-" and isinstance(e.right, ir.Literal) \
            and isinstance(e.right.value, int):
        e = e.left
    if isinstance(e, ir.FuncCall) and e.intrinsic and e.name in ("mod", "modulo") and len(e.args) == 2:
        return e.args[0]
    return None


def _index_sources(v: ir.Expr, ints: set, held, at: Optional[ir.Stmt] = None) -> Optional[list[tuple[str, int]]]:
    """The index arrays (and offsets) a value or subscript ``v`` at statement ``at`` takes
    its value from: an element (:func:`_index_ref`), or a MOD-wrapped expression of
    elements and locals (offset 0; ``held(name, at)``: what a local holds there); None when
    ``v`` is neither form, [] when a wrapped form reads no index array."""
    ref, off = _index_ref(v)
    if ref is not None:
        return [(ref.name, off)] if ref.name in ints else None
    inner = _mod_inner(v)
    if inner is None:
        return None
    out: list[tuple[str, int]] = []
    for x in ir.walk_expr(inner):
        if isinstance(x, ir.ArrayRef) and x.name in ints:
            out.append((x.name, 0))
        elif isinstance(x, ir.Name):
            out += [(a, 0) for a, _ in held(x.name, at)]
    return [x for k, x in enumerate(out) if x not in out[:k]]


def _name_offset(sub: ir.Expr) -> tuple[Optional[str], int]:
    """``t`` or ``t +/- c``: (t, offset)."""
    if isinstance(sub, ir.Name):
        return sub.name, 0
    if isinstance(sub, ir.BinOp) and sub.op in "+-" and isinstance(sub.left, ir.Name) \
            and isinstance(sub.right, ir.Literal) and isinstance(sub.right.value, int):
        return sub.left.name, sub.right.value if sub.op == "+" else -sub.right.value
    return None, 0


def _index_ref(sub: ir.Expr) -> tuple[Optional[ir.ArrayRef], int]:
    """``idx(..)``, ``idx(..) +/- c`` or ``abs(idx(..))`` (a sign that marks something
    else: BookLeaf's ``ireg = ABS(ielreg(iel))``, drawn positive): (the reference, c)."""
    if isinstance(sub, ir.FuncCall) and sub.intrinsic and sub.name in ("abs", "iabs") and len(sub.args) == 1:
        sub = sub.args[0]
    if isinstance(sub, ir.ArrayRef):
        return sub, 0
    if isinstance(sub, ir.BinOp) and sub.op in "+-" and isinstance(sub.left, ir.ArrayRef) \
            and isinstance(sub.right, ir.Literal) and isinstance(sub.right.value, int):
        return sub.left, sub.right.value if sub.op == "+" else -sub.right.value
    return None, 0
