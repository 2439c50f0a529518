"""Prefix sums: a loop whose only loop-carried dependence is a running sum whose partial
values it stores, run as ``Kokkos::parallel_scan`` (issue 15: recurrences that are not
really serial).

Two forms, each the whole dependence the analysis found in the loop (one reason):

* a scalar running sum, ``t = t + e`` (``t = t - e``, ``t = (t + a) - b``, ``t = e + t``),
  read by the statements after it: ``s(i) = t`` (an inclusive scan); ``t`` keeps the total
  after the loop;
* an array recurrence of distance one, ``s(i) = s(i - 1) + e`` (``e`` may read ``s(i)``
  itself, the value before the loop wrote it: ``x(i) = x(i) + x(i - 1)``), ``s`` touched
  nowhere else in the loop.

``e`` must not read the sum. Statements before the update may only set the iteration's
private scalars (they run in both passes of a parallel scan); statements after it run in the
final pass only, with the partial sum in hand, and may not set the sum. The loop has a unit
step and no control flow: assignments only. The value before the loop (``t``, or
``s(lo - 1)`` read where the data is) is added at the first iteration, so a single thread
sums in the Fortran loop's order (bit for bit on Kokkos Serial); parallel backends reorder
the partial sums, which the harness allows for as for reductions
(``ir_facts.has_reduction``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..fortran import affine, ir
from ..fortran.reductions import same_expr
from ..fortran.render import expr_str
from .access import names_in
from .symbols import SymbolTable, cname, cxx_type

IND = "  "  # the emitter's indent


@dataclass
class Scan:
    var: str  # the running scalar, or the array of the recurrence
    update: ir.Assign
    terms: list  # [(op '+' | '-', term)] applied in order to the partial sum
    before: list = field(default_factory=list)  # private scalars set before the update
    after: list = field(default_factory=list)  # run in the final pass, the partial sum known
    previous: Optional[ir.ArrayRef] = None  # array form: s(i - 1), the value before the loop at i = lo

    @property
    def array(self) -> bool:
        return self.previous is not None


def _terms(value: ir.Expr, is_sum) -> Optional[list]:
    """The (op, term) sequence that turns the running sum into ``value``, when ``value``
    is the sum with terms added or subtracted in order; None otherwise."""
    if isinstance(value, ir.BinOp) and value.op == "+" and is_sum(value.right) and not is_sum(value.left):
        return [("+", value.left)]  # e + t: one addition, the same rounding either way
    terms: list = []
    node = value
    while isinstance(node, ir.BinOp) and node.op in ("+", "-") and not is_sum(node):
        terms.append((node.op, node.right))
        node = node.left
    if not terms or not is_sum(node):
        return None
    return list(reversed(terms))


def _shift_of(target: ir.ArrayRef, read: ir.ArrayRef, var: str) -> bool:
    """``read`` is ``target`` one iteration back: the same subscripts but for the one
    dimension indexed by ``var``, where ``read`` is ``target``'s subscript minus one
    (``s(i)`` and ``s(i - 1)``, or ``b(i + 1)`` and ``b(i)``: the running sum stored one place
    on), ``var`` with coefficient one in both."""
    if read.name != target.name or len(read.subscripts) != len(target.subscripts):
        return False
    moved = 0
    for t, r in zip(target.subscripts, read.subscripts):
        if var not in names_in(t) and var not in names_in(r):
            if expr_str(t).replace(" ", "").lower() != expr_str(r).replace(" ", "").lower():
                return False
            continue
        pt, pr = affine.poly_of(t), affine.poly_of(r)
        if pt is None or pr is None:
            return False
        ct, rest_t = affine.split(pt, var)
        cr, rest_r = affine.split(pr, var)
        if not all(c is not None and affine.is_const(c) and affine.constant(c) == 1 for c in (ct, cr)):
            return False
        diff = affine.add(rest_t, rest_r, -1)
        if not (affine.is_const(diff) and affine.constant(diff) == 1):
            return False
        moved += 1
    return moved == 1


def match_scan(do: ir.Do, tab: SymbolTable) -> Optional[Scan]:
    """The prefix sum of ``do`` (see the module's text), or None."""
    info = do.info
    reasons = list(info.reasons or [])
    if info.parallel or len(reasons) != 1 or info.reductions or info.scattered or info.calls:
        return None
    if do.step is not None and not (isinstance(do.step, ir.Literal) and do.step.value == 1):
        return None
    body = [s for s in do.body if not isinstance(s, ir.Continue)]  # the loop's labelled end
    if not body or not all(isinstance(s, ir.Assign) for s in body):
        return None
    private = set(info.private or [])
    code = reasons[0].code
    if code == "scalar-dependence":
        carried = {s.target.name for s in body if isinstance(s.target, ir.Name)} - private - {do.var}
        if len(carried) != 1:
            return None
        var = carried.pop()
        updates = [s for s in body if isinstance(s.target, ir.Name) and s.target.name == var]
        if len(updates) != 1:
            return None
        upd = updates[0]
        terms = _terms(upd.value, lambda e: isinstance(e, ir.Name) and e.name == var)
        previous = None
    elif code == "loop-carried-dependence":
        cand = [s for s in body if isinstance(s.target, ir.ArrayRef)
                and any(isinstance(x, ir.ArrayRef) and x.name == s.target.name for x in ir.walk_expr(s.value))]
        if len(cand) != 1:
            return None
        upd = cand[0]
        var = upd.target.name
        reads = [x for x in ir.walk_expr(upd.value) if isinstance(x, ir.ArrayRef) and x.name == var
                 and not same_expr(x, upd.target)]  # s(i) itself read: its value before the loop wrote it
        if len(reads) != 1 or not _shift_of(upd.target, reads[0], do.var):
            return None
        previous = reads[0]
        terms = _terms(upd.value, lambda e: e is previous)
        if any(var in names_in(s.target) or var in names_in(s.value) for s in body if s is not upd):
            return None
    else:
        return None
    if terms is None:
        return None
    for _, t in terms:  # the terms do not read the sum (an array form's own element excepted)
        if not previous and var in names_in(t):
            return None
        if previous and any(isinstance(x, (ir.Name, ir.ArrayRef)) and x.name == var and not same_expr(x, upd.target)
                            for x in ir.walk_expr(t)):
            return None
    sym = tab.get(var)
    if sym is None or sym.ftype.base not in ("integer", "real"):
        return None
    if sym.ftype.base == "integer" and any(getattr(getattr(t, "ftype", None), "base", None) != "integer"
                                           for _, t in terms):
        # an INTEGER sum of REAL terms truncates at every step: t = INT(1.5) then INT(1 - 0.5)
        # is 0, but partial sums truncated apart and added give 1
        return None
    at = body.index(upd)
    before, after = body[:at], body[at + 1:]
    for s in before:  # both passes run these: private scalars only, not reading the sum
        if not isinstance(s.target, ir.Name) or s.target.name not in private or var in names_in(s.value):
            return None
    for s in after:
        if isinstance(s.target, ir.Name) and (s.target.name == var or s.target.name not in private):
            return None
    return Scan(var, upd, terms, before, after, previous)


def emit_scan(em, n, ind: int) -> list[str]:
    """The parallel_scan of kernel node ``n`` (kind 'scan') printed by emitter ``em``."""
    sc: Scan = n.scan
    do = n.band[0]
    pad = IND * ind
    sym = em.tab[sc.var]
    vtype = cxx_type(sym.ftype)
    itype = cxx_type(em.tab[do.var].ftype if em.tab.get(do.var) else ir.INTEGER)
    lo = em.ex(do.start, em.tab[do.var].ftype, do.line)
    hi = em.ex(do.end, em.tab[do.var].ftype, do.line)
    iv = cname(do.var)
    ctx = {"device": True, "loops": [("lambda", do.construct_name)], "atomic": set()}
    em.lambda_scopes.append({do.var} | set(n.private) | ({sc.var} if not sc.array else set()))
    inner = IND * (ind + 2)
    lines = em.lambda_locals(n.private, ind + 2, skip={do.var, sc.var})
    lines += em.body(sc.before, ind + 2, ctx)
    if sc.array:
        start = em.ex(sc.previous, sym.ftype, sc.update.line)
    else:
        start = "pf_t0"
    lines.append(inner + f"if ({iv} == pf_lo) pf_acc += {start};  // the value before the loop, first")
    for op, t in sc.terms:
        lines.append(inner + f"pf_acc {op}= {em.ex(t, sym.ftype, sc.update.line)};")
    lines.append(inner + "if (pf_final) {")
    if sc.array:
        lines.append(inner + IND + f"{em.ex(sc.update.target, line=sc.update.line)} = pf_acc;")
    else:
        lines.append(inner + IND + f"const {vtype} {sym.c} = pf_acc;")
    lines += em.body(sc.after, ind + 3, ctx)
    lines.append(inner + "}")
    em.lambda_scopes.pop()
    em.use(sc.var)
    out = [pad + f"// line {do.line}: do {do.var} -> parallel_scan (prefix sum {'into' if sc.array else 'of'} {sc.var})",
           pad + "{",
           pad + IND + f"const {itype} pf_lo = {lo};"]
    if not sc.array:
        out.append(pad + IND + f"const {vtype} pf_t0 = {sym.c};")
    out.append(pad + IND + f"{vtype} pf_total = 0;")
    out.append(pad + IND + f"{em.ns}::parallel_scan({em.kernel_name(n)}, pf::range(pf_lo, {hi}), "
               f"KOKKOS_LAMBDA(const {itype} {iv}, {vtype}& pf_acc, const bool pf_final) {{")
    out += lines
    out.append(pad + IND + "}, pf_total);")
    if not sc.array:
        out.append(pad + IND + f"if ({hi} >= pf_lo) {sym.c} = pf_total;  // the sum after the loop")
    out.append(pad + "}")
    out += em.loopvar_final(n, ind)
    return out
