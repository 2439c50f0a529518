"""IR expressions -> C++ expressions, with Fortran's typing rules made explicit.

One job: print an expression. Types follow Fortran: integer division truncates (as in C++),
mixed integer/real operands are converted with explicit casts, real(4) literals stay float
(``0.1`` in Fortran is the float nearest 0.1, then widened), ``**`` with an integer exponent
is ``pf::ipow`` (or a product), with a real exponent ``pf::pow``. Array references keep
Fortran indices and subtract the declared lower bound (literal bounds are folded).
Anything it does not know raises :class:`Refusal`."""
from __future__ import annotations

from typing import Optional

from ..fortran import ir
from . import cstrings
from .symbols import Refusal, SymbolTable, cname, cxx_type

PREC = {"or": 4, "and": 5, "eqv": 9, "neqv": 9, "==": 9, "/=": 9, "<": 10, "<=": 10, ">": 10,
        ">=": 10, "+": 12, "-": 12, "*": 13, "/": 13}
CXX_OP = {"or": "||", "and": "&&", "eqv": "==", "neqv": "!=", "==": "==", "/=": "!=", "<": "<",
          "<=": "<=", ">": ">", ">=": ">=", "+": "+", "-": "-", "*": "*", "/": "/"}
ATOM = 100
UNARY = 15

REAL_FUNCS = {"sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
              "sinh", "cosh", "tanh"}
SPECIFIC = {  # specific names -> generic
    "dsqrt": "sqrt", "dexp": "exp", "dlog": "log", "dlog10": "log10", "dsin": "sin", "dcos": "cos",
    "dtan": "tan", "dasin": "asin", "dacos": "acos", "datan": "atan", "dsinh": "sinh",
    "dcosh": "cosh", "dtanh": "tanh", "dabs": "abs", "iabs": "abs", "cabs": "abs", "zabs": "abs",
    "alog": "log", "alog10": "log10", "datan2": "atan2", "dmax1": "max", "dmin1": "min",
    "amax1": "max", "amin1": "min", "max0": "max", "min0": "min", "dsign": "sign", "isign": "sign",
    "dmod": "mod", "amod": "mod", "idnint": "nint", "dconjg": "conjg", "dimag": "aimag",
    "csqrt": "sqrt", "cdsqrt": "sqrt", "zsqrt": "sqrt", "cexp": "exp", "idint": "int",
    "ifix": "int", "sngl": "real", "dreal": "dble", "dint": "aint", "dnint": "anint",
}
ARRAY_REDUCTIONS = {"sum", "maxval", "minval", "dot_product", "product"}
# bit intrinsics the rules translate (pf_kokkos_compat.hpp has the shifts and single bits)
BIT_INTRINSICS = {"iand", "ior", "ieor", "not", "ishft", "shiftl", "shiftr", "ibset", "ibclr", "btest", "ibits"}
COMPLEX_OK = {"sqrt", "exp", "abs", "conjg", "aimag", "real", "dble", "cmplx", "dcmplx"}


def promote(a: ir.FType, b: ir.FType) -> ir.FType:
    """The type of ``a op b`` for arithmetic operators."""
    order = {"integer": 0, "real": 1, "complex": 2}
    if a.base not in order or b.base not in order:
        return a
    if a.base == b.base:
        return ir.FType(a.base, max(a.kind, b.kind))
    hi, lo = (a, b) if order[a.base] > order[b.base] else (b, a)
    if hi.base == "complex" and lo.base == "real":
        return ir.FType("complex", max(hi.kind, lo.kind))
    return hi


def literal_type(lit: ir.Literal) -> ir.FType:
    if lit.ftype is not None:
        return lit.ftype
    v = lit.value
    if isinstance(v, bool):
        return ir.LOGICAL
    if isinstance(v, int):
        return ir.INTEGER
    text = (lit.text or "").lower()
    if isinstance(v, float):
        return ir.REAL8 if ("d" in text or text.endswith("_8") or "_dp" in text) else ir.REAL4
    if isinstance(v, complex):
        return ir.COMPLEX8 if "d" in text else ir.COMPLEX4
    if isinstance(v, str):
        return ir.FType("character", 1, len(v))
    raise Refusal("unsupported-literal", f"literal {lit.text or v!r}", 0)


def real_text(value: float, kind: int) -> str:
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        raise Refusal("unsupported-literal", f"literal {text}", 0)
    if "." not in text and "e" not in text:
        text += ".0"
    return text + ("f" if kind == 4 else "")


class ExprPrinter:
    """Prints expressions of one kernel. ``renames`` maps Fortran names to C++ text (for
    reduction accumulators, hoisted temporaries); ``line`` is used in refusals."""

    def __init__(self, tab: SymbolTable, renames: Optional[dict[str, str]] = None, line: int = 0):
        self.tab = tab
        self.renames = dict(renames or {})
        self.line = line
        self.used: set[str] = set()  # Fortran names printed (and lower-bound locals)
        # integer divisions by a name print as pf::extent_div (0 when the divisor is 0): for
        # array extents, evaluated before the routine's own guards run (render.array_extents)
        self.safe_division = False

    # ------------------------------------------------------------------ public
    def expr(self, e: ir.Expr, want: Optional[ir.FType] = None) -> str:
        if (want is not None and isinstance(e, ir.Literal) and isinstance(e.value, int)
                and not isinstance(e.value, bool) and literal_type(e).base == "integer"):
            if want.base == "real":
                return real_text(float(e.value), want.kind)
            if want.base == "integer":
                return str(e.value) + ("LL" if want.kind == 8 else "")
        text, prec, t = self._p(e)
        if want is not None:
            return self.convert(text, prec, t, want)[0]
        return text

    def cond(self, e: ir.Expr) -> str:
        return self._p(e)[0]

    def type_of(self, e: ir.Expr) -> ir.FType:
        return self._p(e)[2]

    def refuse(self, code: str, msg: str):
        raise Refusal(code, msg, self.line)

    # ------------------------------------------------------------------ conversions
    def convert(self, text: str, prec: int, have: ir.FType, want: ir.FType) -> tuple[str, int]:
        if have == want or want.base == "character":
            return text, prec
        if want.base == "logical":
            return text, prec  # bool -> int storage (0/1) converts implicitly
        if have.base == "logical":
            self.refuse("type-mismatch", "logical value used as a number")
        if want.base == "complex":
            ct = cxx_type(want)
            return f"{ct}({text})", ATOM
        if have.base == "complex":
            text = f"{self.wrap(text, prec, ATOM)}.real()"
            prec = ATOM
        if have.base == want.base and have.base == "real" and have.kind < want.kind:
            return text, prec  # widening float -> double: exact, C++ does it implicitly
        return f"static_cast<{cxx_type(want)}>({text})", ATOM

    @staticmethod
    def wrap(text: str, prec: int, need: int) -> str:
        return f"({text})" if prec < need else text

    # ------------------------------------------------------------------ dispatch
    def _p(self, e: ir.Expr) -> tuple[str, int, ir.FType]:
        if isinstance(e, ir.Literal):
            return self._literal(e)
        if isinstance(e, ir.Name):
            return self._name(e)
        if isinstance(e, ir.ArrayRef):
            return self._arrayref(e)
        if isinstance(e, ir.UnaryOp):
            return self._unary(e)
        if isinstance(e, ir.BinOp):
            return self._binop(e)
        if isinstance(e, cstrings.Substring):
            return cstrings.substring(self, e)
        if isinstance(e, ir.FuncCall):
            return self._call(e)
        self.refuse("unsupported-expression", f"{type(e).__name__} expression in scalar context")

    def _literal(self, e: ir.Literal):
        t = literal_type(e)
        v = e.value
        if t.base == "logical":
            return ("true" if v else "false"), ATOM, ir.LOGICAL
        if t.base == "integer":
            s = str(int(v)) + ("LL" if t.kind == 8 else "")
            return s, (ATOM if int(v) >= 0 else UNARY), t
        if t.base == "real":
            s = real_text(v, t.kind)
            return s, (ATOM if float(v) >= 0 else UNARY), t
        if t.base == "complex":
            k = t.kind
            return (f"{cxx_type(t)}({real_text(v.real, k)}, {real_text(v.imag, k)})", ATOM, t)
        if t.base == "character":
            if len(v) != 1:
                return cstrings.literal(v)
            ch = v.replace("\\", "\\\\").replace("'", "\\'")
            return f"'{ch}'", ATOM, t
        self.refuse("unsupported-literal", f"literal {e.text}")

    def _name(self, e: ir.Name):
        if e.name in self.renames:
            sym = self.tab.get(e.name)
            t = sym.ftype if sym else (e.ftype or ir.REAL8)
            return self.renames[e.name], ATOM, t
        sym = self.tab.get(e.name)
        if sym is None:
            self.refuse("unknown-name", f"'{e.name}' is not declared in the kernel")
        if sym.is_array:
            self.refuse("array-expression", f"whole array '{e.name}' used where a scalar is needed")
        self.used.add(sym.name)
        return sym.c, ATOM, sym.ftype

    def _arrayref(self, e: ir.ArrayRef):
        sym = self.tab.get(e.name)
        if sym is None:
            self.refuse("unknown-name", f"'{e.name}' is not declared in the kernel")
        if not sym.is_array:
            # a user function referenced with parentheses that the front end left as ArrayRef
            if e.name in self.tab.functions:
                return self._call(ir.FuncCall(e.name, list(e.subscripts), ftype=e.ftype))
            self.refuse("unknown-name", f"'{e.name}' is subscripted but is not an array")
        if len(e.subscripts) != sym.rank:
            self.refuse("rank-mismatch", f"'{e.name}' has rank {sym.rank}, referenced with {len(e.subscripts)} subscripts")
        parts = []
        self.used.add(sym.name)
        for d, s in enumerate(e.subscripts):
            if isinstance(s, ir.Slice):
                self.refuse("array-expression", f"array section of '{e.name}' where a scalar is needed")
            parts.append(self.index(sym.name, d, s))
        return f"{sym.c}({', '.join(parts)})", ATOM, sym.ftype

    def index(self, array: str, d: int, sub: ir.Expr) -> str:
        """The 0-based View index of Fortran subscript ``sub`` in dimension ``d``."""
        sym = self.tab[array]
        lo = sym.lower(d)
        st = self.type_of(sub)
        if st.base != "integer":
            self.refuse("type-mismatch", f"subscript of '{array}' is not an integer")
        if isinstance(lo, ir.Literal) and isinstance(lo.value, int):
            return self._offset(sub, int(lo.value))
        self.used.add(lower_name(array, d))
        text, prec, _ = self._p(sub)
        return f"{self.wrap(text, prec, PREC['+'])} - {lower_name(array, d)}"

    def _offset(self, sub: ir.Expr, lo: int) -> str:
        # fold literal parts: i+1 with lower bound 1 -> i ; 3 -> 2
        if isinstance(sub, ir.Literal):
            return str(int(sub.value) - lo)
        if (isinstance(sub, ir.BinOp) and sub.op in "+-" and isinstance(sub.right, ir.Literal)
                and isinstance(sub.right.value, int)):
            k = int(sub.right.value) if sub.op == "+" else -int(sub.right.value)
            k -= lo
            bt, bp, _ = self._p(sub.left)
            base = self.wrap(bt, bp, PREC["+"])
            if k == 0:
                return base
            return f"{base} {'+' if k > 0 else '-'} {abs(k)}"
        text, prec, _ = self._p(sub)
        if lo == 0:
            return text
        text = self.wrap(text, prec, PREC["+"])
        return f"{text} - {lo}" if lo > 0 else f"{text} + {-lo}"

    def _unary(self, e: ir.UnaryOp):
        text, prec, t = self._p(e.operand)
        if e.op == "not":
            return f"!{self.wrap(text, prec, UNARY)}", UNARY, ir.LOGICAL
        if e.op == "-":
            return f"-{self.wrap(text, prec, UNARY + 1)}", UNARY, t
        return text, prec, t

    def _binop(self, e: ir.BinOp):
        if e.op == "**":
            return self._power(e)
        if e.op == "//":
            self.refuse("unsupported-expression", "character concatenation")
        lt, lp, ltype = self._p(e.left)
        rt, rp, rtype = self._p(e.right)
        op = e.op
        my = PREC[op]
        if op in ("and", "or"):
            return (f"{self.wrap(lt, lp, my)} {CXX_OP[op]} {self.wrap(rt, rp, my + 1)}", my, ir.LOGICAL)
        if op in ("eqv", "neqv"):
            return (f"static_cast<bool>({lt}) {CXX_OP[op]} static_cast<bool>({rt})", my, ir.LOGICAL)
        if ltype.base == "character" or rtype.base == "character":
            return cstrings.compare(self, op, self.wrap(lt, lp, my), ltype, self.wrap(rt, rp, my + 1), rtype)
        if "logical" in (ltype.base, rtype.base):
            self.refuse("type-mismatch", f"logical operand of '{op}'")
        t = promote(ltype, rtype)
        lt, lp = self._operand(e.left, lt, lp, ltype, t)
        rt, rp = self._operand(e.right, rt, rp, rtype, t)
        if op in ("==", "/=", "<", "<=", ">", ">="):
            if t.base == "complex" and op not in ("==", "/="):
                self.refuse("type-mismatch", "ordering comparison of complex values")
            return f"{self.wrap(lt, lp, my)} {CXX_OP[op]} {self.wrap(rt, rp, my + 1)}", my, ir.LOGICAL
        if op == "/" and self.safe_division and t.base == "integer" and not (
                isinstance(e.right, ir.Literal) and e.right.value != 0):
            return f"pf::extent_div({lt}, {rt})", ATOM, t
        # + - * / : left-associative; right operand of - and / needs parentheses at equal precedence
        return f"{self.wrap(lt, lp, my)} {CXX_OP[op]} {self.wrap(rt, rp, my + 1)}", my, t

    def _operand(self, e: ir.Expr, text: str, prec: int, have: ir.FType, want: ir.FType):
        """Convert one operand of an arithmetic operator to the operation's type."""
        if have == want:
            return text, prec
        if isinstance(e, ir.Literal) and have.base == "integer" and want.base == "real":
            return real_text(float(e.value), want.kind), (ATOM if e.value >= 0 else UNARY)
        if isinstance(e, ir.Literal) and have.base == "integer" and want.base == "integer":
            return str(e.value) + ("LL" if want.kind == 8 else ""), (ATOM if e.value >= 0 else UNARY)
        if have.base == "real" and want.base == "real":
            return text, prec  # float widens exactly
        if want.base == "complex" and have.base in ("real", "integer"):
            comp = ir.FType("real", want.kind)
            if isinstance(e, ir.Literal) and have.base == "integer":
                return real_text(float(e.value), want.kind), ATOM
            return self.convert(text, prec, have, comp)
        return self.convert(text, prec, have, want)

    def _power(self, e: ir.BinOp):
        bt, bp, btype = self._p(e.left)
        et, ep, etype = self._p(e.right)
        if etype.base == "integer":
            if btype.base not in ("integer", "real", "complex"):
                self.refuse("type-mismatch", "'**' on a non-numeric value")
            simple = isinstance(e.left, (ir.Name, ir.ArrayRef, ir.Literal)) and bp == ATOM
            if isinstance(e.right, ir.Literal) and simple and int(e.right.value) in (1, 2, 3):
                n = int(e.right.value)
                return " * ".join([bt] * n), (PREC["*"] if n > 1 else ATOM), btype
            return f"pf::ipow({bt}, {et})", ATOM, btype
        if btype.base == "complex" or etype.base == "complex":
            self.refuse("unsupported-intrinsic", "'**' with a complex or real exponent on complex values")
        t = promote(btype, etype)
        if t.base == "integer":
            t = ir.REAL8
        b2, _ = self._operand(e.left, bt, bp, btype, t)
        e2, _ = self._operand(e.right, et, ep, etype, t)
        return f"pf::pow({b2}, {e2})", ATOM, t

    # ------------------------------------------------------------------ calls
    def _kind_arg(self, e: ir.FuncCall, pos: int) -> Optional[int]:
        k = e.keywords.get("kind")
        if k is None and len(e.args) > pos:
            k = e.args[pos]
        if k is None:
            return None
        try:
            env = {n: s.value for n, s in self.tab.symbols.items() if s.value is not None}
            return int(ir.evaluate(k, env))
        except (KeyError, ValueError, TypeError):
            self.refuse("unsupported-intrinsic", f"kind argument of {e.name} is not a constant")

    def _call(self, e: ir.FuncCall):
        name = SPECIFIC.get(e.name, e.name)
        if e.name in self.renames:
            sym_t = e.ftype or ir.REAL8
            return self.renames[e.name], ATOM, sym_t
        if not e.intrinsic and e.name != "lsame":
            return self._user_call(e)
        if isinstance(e, cstrings.SubstringStore):
            self.refuse("unsupported-expression", "a substring assignment inside an expression")
        text = cstrings.intrinsic(self, e)
        if text is not None:
            return text
        if name in ("char", "achar") and len(e.args) == 1:
            t, p, ty = self._p(e.args[0])
            if ty.base != "integer":
                self.refuse("type-mismatch", f"{name.upper()} of {ty}")
            return f"static_cast<char>({t})", ATOM, ir.FType("character", 1, 1)
        shown = e.args
        if name in ("int", "nint", "floor", "ceiling", "real", "huge", "tiny", "epsilon", "aint", "anint"):
            shown = e.args[:1]  # the kind argument is not printed
        elif name in ("cmplx",):
            shown = e.args[:2]
        elif name == "size":
            shown = []
        args = [self._p(a) for a in shown]
        types = [a[2] for a in args]
        if name in ARRAY_REDUCTIONS:
            self.refuse("array-expression", f"{name} left in an expression (not hoisted)")
        if types and types[0].base == "complex" and name not in COMPLEX_OK:
            self.refuse("unsupported-intrinsic", f"{name} of a complex value")
        if name in REAL_FUNCS:
            (t, p, ty), = args[:1]
            if ty.base == "integer":
                self.refuse("type-mismatch", f"{name} of an integer")
            return f"pf::{name}({t})", ATOM, ty
        if name == "atan2":
            t = promote(types[0], types[1])
            a = [self._operand(x, s, p, ty, t)[0] for x, (s, p, ty) in zip(e.args, args)]
            return f"pf::atan2({a[0]}, {a[1]})", ATOM, t
        if name == "abs":
            t, p, ty = args[0]
            if ty.base == "complex":
                return f"pf::cabs({t})", ATOM, ir.FType("real", ty.kind)
            return f"pf::abs({t})", ATOM, ty
        if name in ("min", "max", "mod", "modulo", "sign"):
            if len(args) < 2 or (name != "min" and name != "max" and len(args) != 2):
                self.refuse("unsupported-intrinsic", f"{name} with {len(args)} arguments")
            t = types[0]
            for ty in types[1:]:
                t = promote(t, ty)
            if t.base not in ("integer", "real"):
                self.refuse("unsupported-intrinsic", f"{name} of {t}")
            ap = [self._operand(x, s, p, ty, t) for x, (s, p, ty) in zip(e.args, args)]
            a = [x[0] for x in ap]
            if name == "mod":
                if t.base == "integer":
                    return (f"{self.wrap(ap[0][0], ap[0][1], PREC['*'])} % "
                            f"{self.wrap(ap[1][0], ap[1][1], PREC['*'] + 1)}", PREC["*"], t)
                return f"pf::fmod({a[0]}, {a[1]})", ATOM, t
            if name in ("modulo", "sign"):
                return f"pf::{name}({a[0]}, {a[1]})", ATOM, t
            text = a[-1]
            for x in reversed(a[:-1]):
                text = f"pf::{name}<{cxx_type(t)}>({x}, {text})"
            return text, ATOM, t
        if name in ("int", "nint", "floor", "ceiling"):
            t, p, ty = args[0]
            kind = self._kind_arg(e, 1) or 4
            rt = ir.FType("integer", kind)
            if ty.base == "integer":
                return self.convert(t, p, ty, rt) + (rt,)
            if ty.base == "complex":
                t, p = f"{self.wrap(t, p, ATOM)}.real()", ATOM
            fn = {"int": None, "nint": "pf::nint", "floor": "pf::ifloor", "ceiling": "pf::iceiling"}[name]
            if fn is None:
                return f"static_cast<{cxx_type(rt)}>({t})", ATOM, rt
            inner = f"{fn}({t})"
            return (inner if kind == 4 else f"static_cast<{cxx_type(rt)}>({inner})"), ATOM, rt
        if name in ("aint", "anint"):  # truncation / nearest whole number, as a real
            t, p, ty = args[0]
            if ty.base != "real":
                self.refuse("unsupported-intrinsic", f"{e.name} of {ty}")
            rt = ir.FType("real", self._kind_arg(e, 1) or ty.kind)
            inner = f"pf::{name}({t})"
            return (inner if rt == ty else f"static_cast<{cxx_type(rt)}>({inner})"), ATOM, rt
        if name in ("real", "dble", "float"):
            t, p, ty = args[0]
            if name == "real":
                kind = self._kind_arg(e, 1) or (ty.kind if ty.base == "complex" else 4)
            else:
                kind = 8 if name == "dble" else 4
            rt = ir.FType("real", kind)
            if ty.base == "complex":
                t, p, ty = f"{self.wrap(t, p, ATOM)}.real()", ATOM, ir.FType("real", ty.kind)
            if ty == rt:
                return t, p, rt
            return f"static_cast<{cxx_type(rt)}>({t})", ATOM, rt
        if name in ("cmplx", "dcmplx"):
            kind = 8 if name == "dcmplx" else (self._kind_arg(e, 2) or 4)
            rt = ir.FType("complex", kind)
            comp = ir.FType("real", kind)
            if len(args) == 1 and types[0].base == "complex":
                return f"{cxx_type(rt)}({args[0][0]})", ATOM, rt
            re = self.convert(args[0][0], args[0][1], types[0], comp)[0]
            im = self.convert(args[1][0], args[1][1], types[1], comp)[0] if len(args) > 1 else real_text(0.0, kind)
            return f"{cxx_type(rt)}({re}, {im})", ATOM, rt
        if name == "conjg":
            return f"pf::conj({args[0][0]})", ATOM, types[0]
        if name == "aimag":
            return f"{self.wrap(args[0][0], args[0][1], ATOM)}.imag()", ATOM, ir.FType("real", types[0].kind)
        if name in ("huge", "tiny", "epsilon"):
            ty = types[0]
            vals = {
                ("huge", "integer", 4): "2147483647", ("huge", "integer", 8): "9223372036854775807LL",
                ("huge", "real", 8): "1.7976931348623157e+308", ("huge", "real", 4): "3.40282347e+38f",
                ("tiny", "real", 8): "2.2250738585072014e-308", ("tiny", "real", 4): "1.17549435e-38f",
                ("epsilon", "real", 8): "2.220446049250313e-16", ("epsilon", "real", 4): "1.1920929e-07f",
            }
            key = (name, ty.base, ty.kind)
            if key not in vals:
                self.refuse("unsupported-intrinsic", f"{name} of {ty}")
            return vals[key], ATOM, ty
        if name == "size":
            if not e.args or not isinstance(e.args[0], ir.Name) or not self.tab.is_array(e.args[0].name):
                self.refuse("unsupported-intrinsic", "size of something other than a named array")
            arr = self.tab[e.args[0].name]
            self.used.add(arr.name)
            dim = e.keywords.get("dim") or (e.args[1] if len(e.args) > 1 else None)
            if dim is None:
                return f"static_cast<int>({arr.c}.size())", ATOM, ir.INTEGER
            if not isinstance(dim, ir.Literal):
                self.refuse("unsupported-intrinsic", "size with a non-constant dim")
            return f"static_cast<int>({arr.c}.extent({int(dim.value) - 1}))", ATOM, ir.INTEGER
        if name in BIT_INTRINSICS:
            return self._bits(name, e, args)
        if name == "lsame":
            if len(args) != 2:
                self.refuse("unsupported-intrinsic", "lsame with other than two arguments")
            return f"pf::lsame({args[0][0]}, {args[1][0]})", ATOM, ir.LOGICAL
        self.refuse("unsupported-intrinsic", f"intrinsic {e.name} is not supported by the rules translator")

    def _bits(self, name: str, e: ir.FuncCall, args: list) -> tuple:
        """IAND/IOR/IEOR/NOT as C++ operators on the (promoted) integer type; shifts and single
        bits through pf:: (logical shifts, a shift by the bit size giving 0, as Fortran)."""
        arity = {"not": 1, "ibits": 3}.get(name, 2)
        if len(args) != arity or len(e.keywords):
            self.refuse("unsupported-intrinsic", f"{name} with {len(args)} argument(s)")
        if any(ty.base != "integer" for _t, _p, ty in args):
            self.refuse("unsupported-intrinsic", f"{name} of a non-integer value (a BOZ constant?)")
        t = args[0][2]
        if name in ("iand", "ior", "ieor"):
            t = promote(t, args[1][2])
            a = [self._operand(x, s, p, ty, t) for x, (s, p, ty) in zip(e.args, args)]
            op = {"iand": "&", "ior": "|", "ieor": "^"}[name]
            return f"({self.wrap(a[0][0], a[0][1], UNARY)} {op} {self.wrap(a[1][0], a[1][1], UNARY)})", ATOM, t
        if name == "not":
            return f"static_cast<{cxx_type(t)}>(~{self.wrap(args[0][0], args[0][1], ATOM)})", ATOM, t
        rest = ", ".join(f"static_cast<int>({s})" for s, _p, _ty in args[1:])
        first = args[0][0]
        if name == "shiftl":
            return f"pf::ishft({first}, {rest})", ATOM, t
        if name == "shiftr":
            return f"pf::ishft({first}, -({rest}))", ATOM, t
        return f"pf::{name}({first}, {rest})", ATOM, (ir.LOGICAL if name == "btest" else t)

    def _user_call(self, e: ir.FuncCall):
        fn = self.tab.functions.get(e.name)
        if fn is None:
            self.refuse("call-to-unknown", f"function '{e.name}' is not defined in this source file")
        if fn.kind != "function" or fn.result is None:
            self.refuse("call-to-unknown", f"'{e.name}' is not a function")
        if len(e.args) != len(fn.args):
            self.refuse("call-to-unknown", f"'{e.name}' called with {len(e.args)} arguments, it has {len(fn.args)}")
        if fn.result.dims:
            self.refuse("array-expression", f"'{e.name}' returns an array")
        parts = [self.actual(a, formal, e.name) for a, formal in zip(e.args, fn.args)]
        return f"{function_cname(e.name)}({', '.join(parts)})", ATOM, fn.result.ftype

    def actual(self, a: ir.Expr, formal: ir.Argument, callee: str) -> str:
        """An actual argument of a call to a device function (a routine translated as a
        KOKKOS_INLINE_FUNCTION): by value for a scalar the callee does not write; the
        variable or array element itself (a C++ reference) for a scalar it may write; for
        an array dummy the address of the element passed (sequence association: the
        callee's array starts there, in the caller's contiguous LayoutLeft storage), the
        data of a whole array, or the address of a scalar variable."""
        written = formal.intent != "in" and not formal.value
        if not formal.dims:
            if not written:
                return self.expr(a, formal.ftype)
            element = isinstance(a, ir.ArrayRef) and self.tab.is_array(a.name) \
                and not any(isinstance(x, ir.Slice) for x in a.subscripts)
            if not (element or (isinstance(a, ir.Name) and self.tab.get(a.name) is not None
                                and not self.tab.is_array(a.name))):
                self.refuse("impure-call", f"argument {formal.name} of '{callee}' may be modified: pass a variable "
                            "or an array element")
            self._same_type(a, formal, callee)
            self._writable(a.name, formal, callee)
            return self.expr(a)
        if isinstance(a, ir.ArrayRef) and self.tab.is_array(a.name):
            if any(isinstance(x, ir.Slice) for x in a.subscripts):
                first = contiguous_first(a, self.tab[a.name].dims)
                if first is None:
                    self.refuse("array-section", f"array section of '{a.name}' passed to '{callee}' (argument "
                                f"{formal.name}) is not contiguous: Fortran passes a contiguous copy, the rules do "
                                "not")
                a = first  # gfortran passes a contiguous section in place: its first element's address
            self._same_type(a, formal, callee)
            if written:
                self._writable(a.name, formal, callee)
            return f"&{self._arrayref(a)[0]}"
        if isinstance(a, ir.Name) and self.tab.get(a.name) is not None and self.tab[a.name].role != "param":
            sym = self.tab[a.name]
            self._same_type(a, formal, callee)
            if written:
                self._writable(a.name, formal, callee)
            self.used.add(sym.name)
            return f"{sym.c}.data()" if sym.is_array else f"&{sym.c}"
        self.refuse("impure-call", f"argument {formal.name} of '{callee}' is an array: pass an array, an array "
                    "element or a variable")

    def _same_type(self, a: ir.Expr, formal: ir.Argument, callee: str) -> None:
        sym = self.tab.get(a.name)
        have = sym.ftype if sym is not None else None
        if have != formal.ftype:
            self.refuse("type-mismatch", f"argument {formal.name} of '{callee}' is {formal.ftype}, the actual "
                        f"'{a.name}' is {have} (storage reinterpreted across the call)")

    def _writable(self, name: str, formal: ir.Argument, callee: str) -> None:
        sym = self.tab.get(name)
        if sym is not None and (sym.role == "param" or (sym.role == "arg" and sym.intent == "in")):
            self.refuse("intent-mismatch", f"'{callee}' may write its argument {formal.name}, but '{name}' is "
                        f"{'a constant' if sym.role == 'param' else 'intent(in)'} here")


def contiguous_first(a: ir.ArrayRef, dims: list[ir.Dim]) -> Optional[ir.ArrayRef]:
    """The first element of an array section that is contiguous in column-major storage
    (whole leading dimensions written ``:``, then one range, then points: ``u(:, :, k)``,
    ``src(:, j, k)``, ``v(2:n, j)``), None for any other section. Passed to a routine, such
    a section is the array from that element on, as gfortran passes it (no copy)."""
    subs = a.subscripts
    if len(subs) != len(dims) or any(isinstance(x, ir.Slice) and x.step is not None for x in subs):
        return None
    last = max(i for i, x in enumerate(subs) if isinstance(x, ir.Slice))
    for i in range(last):
        if not (isinstance(subs[i], ir.Slice) and subs[i].lower is None and subs[i].upper is None):
            return None
    first = []
    for i, x in enumerate(subs):
        if isinstance(x, ir.Slice):
            lo = x.lower if x.lower is not None else dims[i].lower
            first.append(lo if lo is not None else ir.Literal(1, "1", ftype=ir.INTEGER))
        else:
            first.append(x)
    return ir.ArrayRef(a.name, first, ftype=a.ftype)


def lower_name(array: str, d: int) -> str:
    """The C++ local holding the lower bound of dimension ``d`` of ``array`` (non-literal bounds)."""
    return f"{cname(array)}_lb{d + 1}"


def function_cname(name: str) -> str:
    """C++ name of a same-source routine translated as a KOKKOS_INLINE_FUNCTION."""
    return f"{name}_fn"
