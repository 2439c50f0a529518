"""fparser2 expressions -> typed IR expressions (``ExprBuilder``), and constant folding
of the expressions declarations need (``eval_const``)."""
from __future__ import annotations

import copy
from typing import Any, Optional

from fparser.two.utils import BinaryOpBase, UnaryOpBase

from . import strings, ftypes, ir
from .ir import FType
from .ftree import list_items, lname
from .scope import Scope, Unsup, literal_kind, unknown_name_reason


_OPS = {
    ".GT.": ">", ".GE.": ">=", ".LT.": "<", ".LE.": "<=", ".EQ.": "==", ".NE.": "/=",
    "==": "==", "/=": "/=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
    ".AND.": "and", ".OR.": "or", ".EQV.": "eqv", ".NEQV.": "neqv", ".NOT.": "not",
    "+": "+", "-": "-", "*": "*", "/": "/", "**": "**", "//": "//",
}


def fval(text: str) -> float:
    return float(text.lower().replace("d", "e").replace("q", "e"))


# --------------------------------------------------------------------------- expressions

# Longest operator chain (a + b + ... as one expression) the IR takes: deeper trees would
# exhaust the recursion the later stages use to copy, pickle and print them (see
# limits.RECURSION_LIMIT). The longest in the corpus we test on has 360 terms.
MAX_CHAIN = 2500


class ExprBuilder:
    """Converts fparser expressions to typed ``ir.Expr`` within a scope."""

    def __init__(self, scope: Scope, user_functions: set[str] | None = None):
        self.scope = scope
        self.user_functions = user_functions or set()
        self.called: list[str] = []
        # statement functions of the routine: name -> (dummy names, fparser body); each
        # reference is inlined, the dummies bound to the actual arguments' IR
        self.stmt_funcs: dict[str, tuple[list[str], Any]] = {}
        self.bound: dict[str, ir.Expr] = {}

    def is_array(self, name: str) -> bool:
        s = self.scope.lookup(name)
        return s is not None and bool(s.dims)

    def expr(self, n) -> ir.Expr:
        cls = type(n).__name__
        meth = getattr(self, "e_" + cls, None)
        if meth is not None:
            return meth(n)
        if isinstance(n, BinaryOpBase):
            return self.binop(n)
        if isinstance(n, UnaryOpBase):
            return self.unop(n)
        raise Unsup("unsupported-construct", f"expression form {cls} is not modelled: {n}")

    # literals
    def kind_of_literal(self, n, base: str, default: int) -> int:
        if n.items[1] is None:
            return default
        kind = literal_kind(n.items[1], self.scope)
        if kind is None:
            raise Unsup("unknown-kind", unknown_name_reason(str(n.items[1]).strip().lower(), self.scope,
                                                            f"kind of the literal {n}"))
        try:
            return ftypes.check_kind(base, kind)
        except ftypes.KindError as exc:
            raise Unsup("unknown-kind", f"literal {n}: {exc}")

    def e_Int_Literal_Constant(self, n):
        kind = self.kind_of_literal(n, "integer", 4)
        return ir.Literal(int(n.items[0]), str(n), ftype=FType("integer", kind))

    def e_Signed_Int_Literal_Constant(self, n):
        return self.e_Int_Literal_Constant(n)

    def e_Real_Literal_Constant(self, n):
        text = n.items[0]
        real, double = ftypes.current_kinds()
        kind = self.kind_of_literal(n, "real", double if "d" in text.lower() else (16 if "q" in text.lower() else real))
        return ir.Literal(fval(text), str(n), ftype=FType("real", kind))

    def e_Signed_Real_Literal_Constant(self, n):
        return self.e_Real_Literal_Constant(n)

    def e_Complex_Literal_Constant(self, n):
        re_, im = self.expr(n.items[0]), self.expr(n.items[1])
        kind = max((x.ftype.kind if x.ftype and x.ftype.base == "real" else 4) for x in (re_, im))
        def num(x):
            if isinstance(x, ir.Literal):
                return x.value
            if isinstance(x, ir.UnaryOp) and isinstance(x.operand, ir.Literal):
                return -x.operand.value if x.op == "-" else x.operand.value
            raise Unsup("unsupported-construct", f"complex literal with named parts: {n}")
        return ir.Literal(complex(num(re_), num(im)), str(n), ftype=FType("complex", kind))

    def e_Logical_Literal_Constant(self, n):
        return ir.Literal(str(n.items[0]).upper() == ".TRUE.", str(n), ftype=ir.LOGICAL)

    def e_Char_Literal_Constant(self, n):
        text = n.items[0]
        q = text[0]
        val = text[1:-1].replace(q + q, q)
        return ir.Literal(val, text, ftype=FType("character", 1, len(val)))

    def e_Binary_Constant(self, n):
        s = str(n)
        return ir.Literal(int(s[2:-1], 2), s, ftype=ir.INTEGER)

    def e_Octal_Constant(self, n):
        s = str(n)
        return ir.Literal(int(s[2:-1], 8), s, ftype=ir.INTEGER)

    def e_Hex_Constant(self, n):
        s = str(n)
        return ir.Literal(int(s[2:-1], 16), s, ftype=ir.INTEGER)

    # names and references
    def e_Name(self, n):
        name = lname(n)
        if name in self.bound:
            return copy.deepcopy(self.bound[name])
        s = self.scope.lookup(name)
        if s is not None and s.pointer:
            raise Unsup("pointer", f"pointer variable {name} is not modelled")
        return ir.Name(name, ftype=self.scope.type_of(name))

    def e_Parenthesis(self, n):
        return self.expr(n.items[1])

    def binop(self, n):
        # a left-deep chain (a + b - c ...: fparser nests it on the left) is walked down
        # iteratively and built bottom-up, so a 1,000-term stencil costs no recursion
        chain = []
        while (isinstance(n, BinaryOpBase) and n.items[0] is not None
               and not hasattr(self, "e_" + type(n).__name__)):
            left, op, right = n.items
            opn = _OPS.get(str(op).upper())
            if opn is None:
                raise Unsup("unsupported-construct", f"defined operator {op} is not modelled")
            chain.append((opn, right))
            n = left
        if len(chain) > MAX_CHAIN:
            raise Unsup("unsupported-construct", f"an expression of {len(chain)} chained operations (more than "
                        f"{MAX_CHAIN}): split it into several statements")
        if chain:
            acc = self.expr(n)
        else:
            left, op, right = n.items  # unary written as Level_2_Expr
            opn = _OPS.get(str(op).upper())
            if opn is None:
                raise Unsup("unsupported-construct", f"defined operator {op} is not modelled")
            r = self.expr(right)
            return ir.UnaryOp(opn, r, ftype=r.ftype)
        for opn, right in reversed(chain):
            b = self.expr(right)
            acc = ir.BinOp(opn, acc, b, ftype=ftypes.binop_type(opn, acc.ftype, b.ftype))
        return acc

    def unop(self, n):
        op, operand = n.items
        opn = _OPS.get(str(op).upper())
        if opn is None:
            raise Unsup("unsupported-construct", f"defined operator {op} is not modelled")
        x = self.expr(operand)
        return ir.UnaryOp(opn, x, ftype=ir.LOGICAL if opn == "not" else x.ftype)

    def subscript(self, n) -> ir.Expr:
        if type(n).__name__ == "Subscript_Triplet":
            lo, hi, st = n.items
            return ir.Slice(self.expr(lo) if lo is not None else None,
                            self.expr(hi) if hi is not None else None,
                            self.expr(st) if st is not None else None)
        return self.expr(n)

    def args(self, arglist) -> tuple[list[ir.Expr], dict[str, ir.Expr]]:
        args, kws = [], {}
        for a in list_items(arglist):
            cls = type(a).__name__
            if cls in ("Actual_Arg_Spec", "Component_Spec"):
                kw, val = a.items
                if kw is not None:
                    kws[lname(kw)] = self.actual(val)
                    continue
                a = val
            args.append(self.actual(a))
        return args, kws

    def actual(self, a) -> ir.Expr:
        cls = type(a).__name__
        if cls in ("Alt_Return_Spec",):
            raise Unsup("unsupported-construct", f"alternate return {a} is not modelled")
        if cls == "Subscript_Triplet":
            return self.subscript(a)
        return self.expr(a)

    def call(self, name: str, arglist, fparser_intrinsic: bool) -> ir.Expr:
        s = self.scope.lookup(name)
        args, kws = self.args(arglist)
        if name in self.stmt_funcs and name not in self.bound:
            return self.inline(name, args, kws)
        user = name in self.user_functions or (s is not None and s.external)
        intrinsic = (not user) and (fparser_intrinsic or ftypes.is_intrinsic(name)) and ftypes.is_intrinsic(name)
        if intrinsic:
            t = ftypes.intrinsic_type(name, args, kws)
        else:
            t = self.scope.type_of(name)
            if name not in self.called:
                self.called.append(name)
        return ir.FuncCall(name, args, intrinsic, kws, ftype=t)

    def inline(self, name: str, args: list[ir.Expr], kws: dict) -> ir.Expr:
        """A statement function's reference: its expression with the dummies bound to the
        actual arguments, converted to the function's type as an assignment would."""
        dummies, body = self.stmt_funcs[name]
        if kws or len(args) != len(dummies):
            raise Unsup("statement-function", f"statement function {name} takes {len(dummies)} arguments, "
                        f"referenced with {len(args) + len(kws)}")
        saved = self.bound
        self.bound = dict(zip(dummies, args))
        try:
            value = self.expr(body)
        finally:
            self.bound = saved
        return convert(value, self.scope.type_of(name), name)

    def ref(self, name: str, sub_list, n) -> ir.Expr:
        s = self.scope.lookup(name)
        if s is not None and s.pointer:
            raise Unsup("pointer", f"pointer variable {name} is not modelled")
        if s is not None and s.dims:
            subs = [self.subscript(x) for x in list_items(sub_list)]
            return ir.ArrayRef(name, subs, ftype=s.ftype or self.scope.type_of(name))
        t = self.scope.type_of(name)
        if t is not None and t.base == "character" and s is not None and s.typed:
            return self.substring(ir.Name(name, ftype=t), sub_list, n)
        return None

    def substring(self, base: ir.Expr, rng, n) -> ir.Expr:
        """``base(lo:hi)`` (fparser: one Subscript_Triplet, or a Substring_Range)."""
        items = list_items(rng) if type(rng).__name__ != "Substring_Range" else [rng]
        if len(items) != 1 or type(items[0]).__name__ not in ("Subscript_Triplet", "Substring_Range") \
                or (len(items[0].items) > 2 and items[0].items[2] is not None):
            raise Unsup("unsupported-construct", f"character reference {n} is not a substring (lo:hi)")
        lo, hi = items[0].items[0], items[0].items[1]
        return strings.make_substring(base, self.expr(lo) if lo is not None else None,
                                      self.expr(hi) if hi is not None else None)

    def e_Array_Section(self, n):
        """``a(i)(lo:hi)``: a substring of an element of a character array."""
        base = self.expr(n.items[0])
        if base.ftype is None or base.ftype.base != "character":
            raise Unsup("unsupported-construct", f"section {n} of a non-character value is not modelled")
        return self.substring(base, n.items[1], n)

    def e_Part_Ref(self, n):
        name = lname(n.items[0])
        r = self.ref(name, n.items[1], n)
        if r is not None:
            return r
        return self.call(name, n.items[1], False)

    def e_Intrinsic_Function_Reference(self, n):
        name = lname(n.items[0])
        r = self.ref(name, n.items[1], n)
        if r is not None:
            return r
        return self.call(name, n.items[1], True)

    def e_Function_Reference(self, n):
        name = lname(n.items[0])
        return self.call(name, n.items[1], False)

    def e_Structure_Constructor(self, n):
        name = lname(n.items[0])
        if name in self.scope.derived_types:
            raise Unsup("derived-type", f"structure constructor {n} is not modelled")
        r = self.ref(name, n.items[1], n)
        if r is not None:
            return r
        return self.call(name, n.items[1], False)

    def e_Array_Constructor(self, n):
        spec = n.items[1]
        items = []
        for x in list_items(spec):
            if type(x).__name__ == "Ac_Implied_Do":
                raise Unsup("unsupported-construct", f"implied DO in array constructor {n} is not modelled")
            if type(x).__name__ == "Ac_Spec":
                raise Unsup("unsupported-construct", f"typed array constructor {n} is not modelled")
            items.append(self.expr(x))
        t = None
        for x in items:
            t = ftypes.promote(t, x.ftype) if t is None or (x.ftype and x.ftype.base in ("integer", "real", "complex")) else t
        return ir.ArrayConstructor(items, ftype=t)

    def e_Data_Ref(self, n):
        raise Unsup("derived-type", f"derived-type component reference {n} is not modelled")

    def e_Proc_Component_Ref(self, n):
        raise Unsup("derived-type", f"procedure component reference {n} is not modelled")


def convert(value: ir.Expr, want: Optional[FType], name: str) -> ir.Expr:
    """``value`` as a value of type ``want`` (Fortran's conversion on assignment)."""
    have = value.ftype
    if want is None or have is None or (have.base, have.kind) == (want.base, want.kind):
        return value
    fn = {("integer", 4): "int", ("real", 4): "real", ("real", 8): "dble", ("complex", 4): "cmplx",
          ("complex", 8): "dcmplx"}.get((want.base, want.kind))
    if fn is None or have.base not in ("integer", "real", "complex"):
        raise Unsup("statement-function", f"statement function {name}: its {have.base}({have.kind}) value "
                    f"converted to {want.base}({want.kind}) is not modelled")
    return ir.FuncCall(fn, [value], True, {}, ftype=FType(want.base, want.kind))


# --------------------------------------------------------------------------- declarations


def eval_const(e: ir.Expr, env: dict[str, Any]) -> Any:
    """Evaluate a constant expression (PARAMETER values, kinds, bounds)."""
    if isinstance(e, ir.FuncCall) and e.intrinsic:
        name = e.name
        args = [eval_const(a, env) for a in e.args]
        kw = {k: eval_const(v, env) for k, v in e.keywords.items()}
        if name == "selected_real_kind":
            p = args[0] if args else kw.get("p")
            r = args[1] if len(args) > 1 else kw.get("r")
            return ftypes.selected_real_kind(None if p is None else int(p), None if r is None else int(r))
        if name == "selected_int_kind":
            return ftypes.selected_int_kind(int(args[0] if args else kw["r"]))
        if name == "kind":
            t = e.args[0].ftype if e.args else None
            if t is None:
                raise ValueError(f"the type of {e.args[0] if e.args else '?'} is not known")
            return t.kind
        if name in ("real", "float", "sngl", "dble", "dfloat"):
            return float(args[0])
        if name in ("int", "ifix", "idint"):
            return int(args[0])
        if name in ("sqrt", "dsqrt"):
            return float(args[0]) ** 0.5
        if name in ("atan", "datan", "acos", "dacos", "asin", "exp", "log", "sin", "cos"):
            import math
            fn = {"atan": math.atan, "datan": math.atan, "acos": math.acos, "dacos": math.acos, "asin": math.asin,
                  "exp": math.exp, "log": math.log, "sin": math.sin, "cos": math.cos}[name]
            return fn(float(args[0]))
        if name == "epsilon":
            t = e.args[0].ftype
            return 2.220446049250313e-16 if t and t.kind == 8 else 1.1920929e-07
        if name == "huge":
            t = e.args[0].ftype
            if t and t.base == "integer":
                return 2**31 - 1 if t.kind == 4 else 2**63 - 1
            return 1.7976931348623157e308 if t and t.kind == 8 else 3.4028235e38
        if name == "tiny":
            t = e.args[0].ftype
            return 2.2250738585072014e-308 if t and t.kind == 8 else 1.1754944e-38
        if name == "cmplx" or name == "dcmplx":
            return complex(args[0], args[1] if len(args) > 1 else 0.0)
    if isinstance(e, ir.ArrayConstructor):
        return [eval_const(x, env) for x in e.items]
    if isinstance(e, ir.BinOp) and e.op == "/":
        a, b = eval_const(e.left, env), eval_const(e.right, env)
        if isinstance(a, int) and isinstance(b, int):
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        return a / b
    if isinstance(e, ir.BinOp):
        a, b = eval_const(e.left, env), eval_const(e.right, env)
        return ir.evaluate(ir.BinOp(e.op, ir.Literal(a), ir.Literal(b)), {})
    if isinstance(e, ir.UnaryOp):
        v = eval_const(e.operand, env)
        return ir.evaluate(ir.UnaryOp(e.op, ir.Literal(v)), {})
    return ir.evaluate(e, env)
