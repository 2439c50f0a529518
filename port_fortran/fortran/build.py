"""fparser2 parse tree -> kernel IR (declarations, typed expressions, statement tree).

A small visitor dispatching on fparser node class names. Anything not modelled becomes an
``ir.Unsupported`` with a construct code, a reason and the line; nothing is dropped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from fparser.two import Fortran2003 as F
from fparser.two.utils import Base, BinaryOpBase, UnaryOpBase

from . import ftypes, ir
from .ir import FType
from .reader import SourceText

# --------------------------------------------------------------------------- symbols


@dataclass
class Sym:
    name: str
    ftype: Optional[FType] = None
    typed: bool = False  # explicitly typed
    dims: Optional[list[ir.Dim]] = None
    parameter: Any = None
    is_parameter: bool = False
    allocatable: bool = False
    save: bool = False
    common: Optional[str] = None
    module: Optional[str] = None
    intent: Optional[str] = None
    value: bool = False
    optional: bool = False
    external: bool = False
    intrinsic: bool = False
    pointer: bool = False
    line: int = 0
    char_len: Optional[int] = None
    bad: Optional[str] = None  # why its declaration could not be read (unknown kind, missing module)
    bad_code: str = "unknown-kind"  # the Unsupported construct its users get: unknown-kind | unknown-module


class Scope:
    def __init__(self, parent: Optional["Scope"] = None, module: Optional[str] = None):
        self.parent = parent
        self.module = module
        self.syms: dict[str, Sym] = {}
        self.implicit = dict(parent.implicit) if parent else ftypes.default_implicit()
        self.implicit_none = parent.implicit_none if parent else False
        self.imported: dict[str, Sym] = {}  # from USEd modules
        self.derived_types: set[str] = set(parent.derived_types) if parent else set()
        self.missing_modules: dict[str, tuple[int, bool, str]] = {}  # USEd, not found -> (USE line, ONLY, note)

    def local(self, name: str) -> Sym:
        s = self.syms.get(name)
        if s is None:
            s = self.syms[name] = Sym(name)
        return s

    def lookup(self, name: str) -> Optional[Sym]:
        if name in self.syms:
            return self.syms[name]
        if name in self.imported:
            return self.imported[name]
        if self.parent is not None:
            return self.parent.lookup(name)
        return None

    def is_host(self, name: str) -> bool:
        """Name resolves outside this scope (module or host variable)."""
        return name not in self.syms and self.lookup(name) is not None

    def type_of(self, name: str) -> Optional[FType]:
        s = self.lookup(name)
        if s is not None and s.ftype is not None:
            return s.ftype
        if self.implicit_none and s is None:
            return None
        return ftypes.implicit_type(name, self.implicit)

    def all_missing_modules(self) -> dict[str, tuple[int, bool, str]]:
        """Modules USEd here or in a host that were not found (name -> USE line)."""
        out = self.parent.all_missing_modules() if self.parent else {}
        out.update(self.missing_modules)
        return out

    def params(self) -> dict[str, Any]:
        env = self.parent.params() if self.parent else {}
        for local, s in self.imported.items():  # the local name (USE m, only: wp => real64)
            if s.is_parameter and s.parameter is not None:
                env[local] = s.parameter
        for s in self.syms.values():
            if s.is_parameter and s.parameter is not None:
                env[s.name] = s.parameter
        return env


class ModuleScopes:
    """Module name -> its Scope, for USE: the file's own modules, the intrinsic modules,
    then the interfaces given for modules of other files (``parse_file(modules=...)``)."""

    def __init__(self, external: Optional[dict] = None, notes: Optional[dict] = None):
        self.own: dict[str, Scope] = {}
        self.external = dict(external or {})
        self.notes = dict(notes or {})
        self._converted: dict[str, Scope] = {}
        self.missing: dict[str, int] = {}  # USEd modules found nowhere -> first USE line

    def __setitem__(self, name: str, scope: Scope) -> None:
        self.own[name] = scope

    def __getitem__(self, name: str) -> Scope:
        s = self.get(name)
        if s is None:
            raise KeyError(name)
        return s

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def get(self, name: str) -> Optional[Scope]:
        if name in self.own:
            return self.own[name]
        if name not in self._converted:
            from .intrinsic_modules import intrinsic_module
            iface = intrinsic_module(name) or self.external.get(name)
            self._converted[name] = scope_from_interface(iface) if iface is not None else None
        return self._converted[name]


def scope_from_interface(iface: ir.ModuleInterface) -> Scope:
    """The Scope a USE of ``iface`` imports from."""
    scope = Scope(None, module=iface.name)
    for name, v in iface.variables.items():
        sym = scope.local(name)
        sym.ftype, sym.typed, sym.dims = v.ftype, True, list(v.dims) or None
        sym.is_parameter = name in iface.constants
        sym.parameter = v.parameter if sym.is_parameter else None
        sym.allocatable, sym.save, sym.line, sym.module = v.allocatable, v.save, v.line, iface.name
        sym.pointer = name in iface.pointers
    for name, rt in iface.procedures.items():
        sym = scope.local(name)
        sym.ftype, sym.typed, sym.external, sym.module = rt, rt is not None, True, iface.name
    for name, (code, why) in iface.unresolved.items():
        sym = scope.local(name)
        sym.bad, sym.bad_code, sym.module = why, code, iface.name
    scope.derived_types |= set(iface.derived_types)
    return scope


def interface_of(name: str, scope: Scope, procedures: list[ir.Kernel], file: str, line: int,
                 uses: tuple = ()) -> ir.ModuleInterface:
    """What module ``name`` (its scope and its module procedures) exports."""
    iface = ir.ModuleInterface(name, file=file, line=line, uses=list(uses))
    pool = dict(scope.imported)
    pool.update(scope.syms)
    for nm, sym in pool.items():
        if sym.bad:
            iface.unresolved[nm] = (sym.bad_code, sym.bad)
            continue
        if sym.external:
            iface.procedures[nm] = sym.ftype
            continue
        t = sym.ftype or scope.type_of(nm)
        if t is None:
            iface.unresolved[nm] = ("untyped", f"{nm} has no type in module {name} (IMPLICIT NONE)")
            continue
        iface.variables[nm] = ir.Variable(nm, t, list(sym.dims or []), parameter=sym.parameter if sym.is_parameter else None,
                                          allocatable=sym.allocatable, save=sym.save, module=sym.module or name,
                                          line=sym.line)
        if sym.is_parameter:
            iface.constants.append(nm)
        if sym.pointer:
            iface.pointers.append(nm)
    for k in procedures:
        iface.procedures[k.name] = k.result.ftype if k.result is not None else None
    iface.derived_types = sorted(scope.derived_types)
    return iface


class Unsup(Exception):
    def __init__(self, construct: str, reason: str):
        super().__init__(reason)
        self.construct = construct
        self.reason = reason


# --------------------------------------------------------------------------- helpers

_OPS = {
    ".GT.": ">", ".GE.": ">=", ".LT.": "<", ".LE.": "<=", ".EQ.": "==", ".NE.": "/=",
    "==": "==", "/=": "/=", "<": "<", "<=": "<=", ">": ">", ">=": ">=",
    ".AND.": "and", ".OR.": "or", ".EQV.": "eqv", ".NEQV.": "neqv", ".NOT.": "not",
    "+": "+", "-": "-", "*": "*", "/": "/", "**": "**", "//": "//",
}


def lname(node) -> str:
    return str(node).strip().lower()


def stmt_line(node, src: SourceText) -> int:
    item = getattr(node, "item", None)
    if item is not None and getattr(item, "span", None):
        return src.origin(item.span[0]).main_line
    for c in getattr(node, "children", None) or []:
        if isinstance(c, Base):
            ln = stmt_line(c, src)
            if ln:
                return ln
    return 0


def raw_line(node) -> int:
    item = getattr(node, "item", None)
    if item is not None and getattr(item, "span", None):
        return item.span[0]
    for c in getattr(node, "children", None) or []:
        if isinstance(c, Base):
            ln = raw_line(c)
            if ln:
                return ln
    return 0


def stmt_label(node) -> Optional[int]:
    item = getattr(node, "item", None)
    lab = getattr(item, "label", None) if item is not None else None
    try:
        return int(lab) if lab is not None else None
    except (TypeError, ValueError):
        return None


def find_nodes(root, types) -> list:
    """Nodes of the given classes under ``root`` in pre-order (fparser's ``walk``, without
    its recursion: a 1,000-term expression is 1,000 levels deep)."""
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if isinstance(n, types):
            out.append(n)
        if isinstance(n, Base):
            kids = n.children
        elif isinstance(n, (list, tuple)):
            kids = n
        else:
            continue
        stack.extend(reversed([c for c in kids if isinstance(c, (Base, list, tuple))]))
    return out


def children(node) -> list:
    return [c for c in (getattr(node, "children", None) or []) if c is not None]


def stmt_children(node) -> list:
    """Children of a construct without comments."""
    return [c for c in children(node) if type(c).__name__ != "Comment"]


def list_items(node) -> list:
    """Items of an fparser *_List (or a single item)."""
    if node is None:
        return []
    if type(node).__name__.endswith("_List"):
        return [c for c in node.items if c is not None]
    return [node]


def literal_kind(kind, scope: Scope) -> Optional[int]:
    """The value of a literal's kind parameter (``1.0_dp``, ``4_int64``): None if unknown."""
    if kind is None:
        return None
    k = str(kind).strip().lower()
    if k.isdigit():
        return int(k)
    env = scope.params()
    v = env.get(k)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def unknown_name_reason(name: str, scope: Scope, what: str) -> str:
    """Why ``name`` (used as ``what``) has no value here, and what to do about it."""
    s = scope.lookup(name)
    if s is not None and s.bad:
        return f"{what}: {s.bad}"
    missing = scope.all_missing_modules()
    if missing:
        mods = ", ".join(f"{m} (USE at line {ln})" for m, (ln, _only, _n) in sorted(missing.items()))
        notes = "".join(f"; {note}" for _ln, _only, note in missing.values() if note)
        return (f"{what}: {name} is not defined here; it should come from module {mods}, which was not found{notes}: "
                "give port-fortran the file that defines the module too (it searches the files and trees given "
                "and the include directories)")
    if s is not None:
        return f"{what}: {name} is not a named constant with a known value"
    return f"{what}: {name} is not defined (no PARAMETER or module gives it a value)"


def fval(text: str) -> float:
    return float(text.lower().replace("d", "e").replace("q", "e"))


# --------------------------------------------------------------------------- expressions

# Longest operator chain (a + b + ... as one expression) the IR takes: deeper trees would
# exhaust the recursion the later stages use to copy, pickle and print them (see
# parse.RECURSION_LIMIT). The longest in the corpus we test on has 360 terms.
MAX_CHAIN = 2500


class ExprBuilder:
    """Converts fparser expressions to typed ``ir.Expr`` within a scope."""

    def __init__(self, scope: Scope, user_functions: set[str] | None = None):
        self.scope = scope
        self.user_functions = user_functions or set()
        self.called: list[str] = []

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
        kind = self.kind_of_literal(n, "real", 8 if "d" in text.lower() else (16 if "q" in text.lower() else 4))
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
        user = name in self.user_functions or (s is not None and s.external)
        intrinsic = (not user) and (fparser_intrinsic or ftypes.is_intrinsic(name)) and ftypes.is_intrinsic(name)
        if intrinsic:
            t = ftypes.intrinsic_type(name, args, kws)
        else:
            t = self.scope.type_of(name)
            if name not in self.called:
                self.called.append(name)
        return ir.FuncCall(name, args, intrinsic, kws, ftype=t)

    def ref(self, name: str, sub_list, n) -> ir.Expr:
        s = self.scope.lookup(name)
        if s is not None and s.pointer:
            raise Unsup("pointer", f"pointer variable {name} is not modelled")
        if s is not None and s.dims:
            subs = [self.subscript(x) for x in list_items(sub_list)]
            return ir.ArrayRef(name, subs, ftype=s.ftype or self.scope.type_of(name))
        t = self.scope.type_of(name)
        if t is not None and t.base == "character" and s is not None and s.typed:
            raise Unsup("unsupported-construct", f"character substring {n} is not modelled")
        return None

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


class DeclBuilder:
    """Fills a ``Scope`` from a specification part; collects spec-level unsupported nodes."""

    def __init__(self, scope: Scope, src: SourceText, modules: dict[str, Scope], user_functions: set[str]):
        self.scope = scope
        self.src = src
        self.modules = modules
        self.user_functions = user_functions
        self.unsupported: list[ir.Unsupported] = []
        self.commons: list[ir.CommonBlock] = []
        self.uses: list[str] = []
        self.diagnostics: list[ir.Diagnostic] = []
        self.data_values: dict[str, Any] = {}
        self.data_sets: list[tuple[list[str], list, Any]] = []  # DATA: (names, values, node)
        self.stmt_functions: list = []  # Stmt_Function_Stmt nodes, decided after the spec part

    def eb(self) -> ExprBuilder:
        return ExprBuilder(self.scope, self.user_functions)

    def unsup(self, node, construct, reason):
        self.unsupported.append(ir.Unsupported(construct, reason, str(node), line=stmt_line(node, self.src),
                                               label=stmt_label(node)))

    def type_spec(self, ts, entity_len=None) -> FType:
        cls = type(ts).__name__
        if cls != "Intrinsic_Type_Spec":
            raise Unsup("derived-type", f"declaration with {ts} is not modelled")
        base_s, sel = ts.items
        base_s = str(base_s).upper()
        if base_s == "DOUBLE PRECISION":
            return ir.REAL8
        if base_s == "DOUBLE COMPLEX":
            return ir.COMPLEX8
        base = base_s.lower()
        if base == "character":
            return FType("character", 1, self.char_len(sel) if sel is not None else 1)
        kind = 4
        if sel is not None:
            items = sel.items
            star = str(items[0]) == "*"
            kind = ftypes.normalise_kind(base, self.kind_value(items[1]), star)
            try:
                ftypes.check_kind(base, kind)
            except ftypes.KindError as exc:
                raise Unsup("unknown-kind", f"{ts}: {exc}")
        return FType(base, kind)

    def kind_value(self, kexpr) -> int:
        """The value of a kind selector, as the compiler computes it; Unsup('unknown-kind')
        with the reason when it cannot be known here (never a default)."""
        what = f"kind {kexpr}"
        try:
            e = self.eb().expr(kexpr)
        except Unsup as u:
            raise Unsup("unknown-kind", f"{what}: {u.reason}")
        try:
            v = eval_const(e, self.scope.params())
        except KeyError as exc:
            raise Unsup("unknown-kind", unknown_name_reason(str(exc.args[0]), self.scope, what))
        except Exception as exc:  # not a constant expression the front end evaluates
            names = [x for x in expr_names(e) if x not in self.scope.params()]
            if names:
                raise Unsup("unknown-kind", unknown_name_reason(names[0], self.scope, what))
            raise Unsup("unknown-kind", f"{what} could not be evaluated ({exc})")
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if not isinstance(v, int) or isinstance(v, bool):
            raise Unsup("unknown-kind", f"{what} evaluates to {v!r}, not an integer")
        return v

    def char_len(self, sel) -> Optional[int]:
        s = str(sel).replace(" ", "").lower()
        if s in ("*(*)", "(*)", "*", "(len=*)") or s.endswith("=*)") or s.endswith("(*)"):
            return None
        m = re.search(r"(\d+)", s)
        if m:
            return int(m.group(1))
        try:
            v = eval_const(self.eb().expr(sel.items[1]), self.scope.params())
            return int(v)
        except Exception:
            return None

    def dims(self, spec) -> list[ir.Dim]:
        cls = type(spec).__name__
        eb = self.eb()
        out: list[ir.Dim] = []
        if cls in ("Assumed_Shape_Spec_List", "Deferred_Shape_Spec_List"):
            for x in list_items(spec):
                lo = x.items[0] if getattr(x, "items", None) else None
                out.append(ir.Dim(eb.expr(lo) if lo is not None else None, None, assumed_shape=True))
            return out
        if cls == "Assumed_Size_Spec":
            shape_list, last_lo = spec.items[0], spec.items[1]
            if shape_list is not None:
                out += self.dims(shape_list)
            out.append(ir.Dim(eb.expr(last_lo) if last_lo is not None else None, None))
            return out
        if cls in ("Explicit_Shape_Spec_List",):
            for x in list_items(spec):
                out += self.dims(x)
            return out
        if cls == "Explicit_Shape_Spec":
            lo, hi = spec.items
            return [ir.Dim(eb.expr(lo) if lo is not None else None, eb.expr(hi))]
        if cls in ("Assumed_Shape_Spec", "Deferred_Shape_Spec"):
            lo = spec.items[0] if getattr(spec, "items", None) else None
            return [ir.Dim(eb.expr(lo) if lo is not None else None, None, assumed_shape=True)]
        raise Unsup("unsupported-construct", f"array specification {spec} is not modelled")

    def declare(self, name: str, line: int) -> Sym:
        s = self.scope.local(name)
        if not s.line:
            s.line = line
        return s

    # ------------------------------------------------------------------ statements
    def visit(self, node):
        for c in children(node):
            cls = type(c).__name__
            if cls in ("Implicit_Part", "Specification_Part"):
                self.visit(c)
                continue
            meth = getattr(self, "s_" + cls, None)
            try:
                if meth is not None:
                    meth(c)
                elif cls == "Comment":
                    continue
                else:
                    self.unsup(c, "unsupported-construct", f"{cls.replace('_', ' ')} is not modelled")
            except Unsup as u:
                self.unsup(c, u.construct, u.reason)
                self._mark_declared(c, u.construct, u.reason)
            except Exception as exc:
                why = f"{cls.replace('_', ' ')} not modelled ({type(exc).__name__}: {exc})"
                self.unsup(c, "unsupported-construct", why)
                self._mark_declared(c, "unsupported-construct", why)

    def _mark_declared(self, n, construct: str, reason: str) -> None:
        """The names a declaration that could not be read declares: marked with why, so that
        a use elsewhere (a module's user, an internal procedure, an assignment that looks
        like a statement function) is refused for that reason, not as an untyped name."""
        if type(n).__name__ != "Type_Declaration_Stmt":
            return
        line = stmt_line(n, self.src)
        for ent in list_items(n.items[2]):
            try:
                sym = self.declare(lname(ent.items[0]), line)
            except (AttributeError, IndexError, TypeError):
                continue
            if not sym.bad:
                sym.bad, sym.bad_code = f"{reason} (declared at line {line})", construct

    def s_Enum_Def(self, n):
        """``ENUM, BIND(C)``: each enumerator a named integer(c_int) constant, counting from
        0 or from the value given."""
        line = stmt_line(n, self.src)
        nxt = 0
        for st in children(n):
            if type(st).__name__ != "Enumerator_Def_Stmt":
                continue
            for e in list_items(st.items[1]):
                if type(e).__name__ == "Enumerator":
                    name = lname(e.items[0])
                    nxt = int(eval_const(self.eb().expr(e.items[2]), self.scope.params()))
                else:
                    name = lname(e)
                sym = self.declare(name, line)
                sym.ftype, sym.typed, sym.is_parameter, sym.parameter = ir.INTEGER, True, True, nxt
                nxt += 1

    def s_Implicit_Stmt(self, n):
        spec = n.items[0]
        if str(spec).upper() == "NONE" or spec is None:
            self.scope.implicit_none = True
            for k in self.scope.implicit:
                self.scope.implicit[k] = None
            return
        for isp in list_items(spec):
            ts, letters = isp.items
            t = self.type_spec(ts)
            for ls in list_items(letters):
                a, b = ls.items
                a = str(a).lower()
                b = str(b).lower() if b is not None else a
                for o in range(ord(a), ord(b) + 1):
                    self.scope.implicit[chr(o)] = t

    def s_Use_Stmt(self, n):
        modname = lname(n.items[2])
        line = stmt_line(n, self.src)
        self.uses.append(modname)
        mscope = self.modules.get(modname)
        lst = n.items[4] if len(n.items) > 4 else None
        is_only = len(n.items) > 3 and "ONLY" in str(n.items[3]).upper()
        names = [] if is_only else None  # None: every public name of the module
        renames = {}
        for o in list_items(lst):
            if type(o).__name__ == "Rename":
                renames[lname(o.items[1])] = lname(o.items[2])
            elif is_only:
                names.append(lname(o))
        if mscope is None:
            note = self.modules.notes.get(modname) if isinstance(self.modules, ModuleScopes) else None
            self.scope.missing_modules.setdefault(modname, (line, is_only, note or ""))
            if isinstance(self.modules, ModuleScopes):
                self.modules.missing.setdefault(modname, line)
            self.diagnostics.append(ir.Diagnostic("unknown-module", f"module {modname} is neither in this file nor in "
                                                  "the files given: the names it provides are unknown"
                                                  + (f" ({note})" if note else ""), line))
            why = (f"comes from module {modname} (USE at line {line}), which was not found: "
                   + (f"{note}; " if note else "") + "give port-fortran the file that defines it too")
            for local in list(names or []) + list(renames):
                self.scope.imported[local] = Sym(local, bad=f"{local} {why}", bad_code="unknown-module", module=modname,
                                                 line=line)
            return
        pool = dict(mscope.syms)
        pool.update(mscope.imported)
        if names is None:
            for k, s in pool.items():
                if k not in renames.values():
                    self.scope.imported[k] = s
        else:
            for k in names:
                if k in pool:
                    self.scope.imported[k] = pool[k]
        for local, remote in renames.items():
            if remote in pool:
                self.scope.imported[local] = pool[remote]
        self.scope.derived_types |= mscope.derived_types

    def s_Type_Declaration_Stmt(self, n):
        ts, attrs, entities = n.items
        line = stmt_line(n, self.src)
        kind_error = None
        try:
            base_t = self.type_spec(ts)
        except Unsup as u:
            if u.construct != "unknown-kind":
                raise
            # the names are still declared (arrays stay arrays), marked: their users are
            # refused with this reason; the statement itself is reported below
            kind_error, base_t = u, None
        dims_attr = None
        flags = {}
        for a in list_items(attrs):
            s = str(a).upper().replace(" ", "")
            if type(a).__name__ == "Dimension_Attr_Spec":
                dims_attr = self.dims(a.items[1])
            elif s.startswith("INTENT"):
                flags["intent"] = s[s.index("(") + 1:s.index(")")].lower().replace("inout", "inout")
            elif s == "PARAMETER":
                flags["parameter"] = True
            elif s == "ALLOCATABLE":
                flags["allocatable"] = True
            elif s == "SAVE":
                flags["save"] = True
            elif s == "VALUE":
                flags["value"] = True
            elif s == "OPTIONAL":
                flags["optional"] = True
            elif s == "EXTERNAL":
                flags["external"] = True
            elif s == "INTRINSIC":
                flags["intrinsic"] = True
            elif s == "POINTER":
                flags["pointer"] = True
            elif s in ("TARGET", "PUBLIC", "PRIVATE", "CONTIGUOUS", "VOLATILE", "ASYNCHRONOUS", "PROTECTED"):
                pass
            else:
                self.unsup(n, "unsupported-construct", f"attribute {a} is not modelled")
        for ent in list_items(entities):
            name = lname(ent.items[0])
            sym = self.declare(name, line)
            t = base_t
            clen = ent.items[2] if len(ent.items) > 2 else None
            if t is None:  # unknown kind: declared, marked, never typed by default
                sym.bad = f"{kind_error.reason} (declared at line {line})"
                sym.dims = self.dims(ent.items[1]) if ent.items[1] is not None else \
                    (list(dims_attr) if dims_attr is not None else None)
                sym.is_parameter = bool(flags.get("parameter"))
                for k in ("intent", "allocatable", "pointer", "value", "optional", "save"):
                    if k in flags:
                        setattr(sym, k, flags[k])
                continue
            if clen is not None and t.base == "character":
                t = FType("character", 1, self.char_len(clen))
            elif clen is not None:
                try:
                    k = int(str(clen).strip().lstrip("*"))
                    t = FType(t.base, ftypes.normalise_kind(t.base, k, True))
                except ValueError:
                    pass
            sym.ftype = t
            sym.typed = True
            if ent.items[1] is not None:
                sym.dims = self.dims(ent.items[1])
            elif dims_attr is not None:
                sym.dims = list(dims_attr)
            for k, v in flags.items():
                setattr(sym, "is_parameter" if k == "parameter" else k, v)
            if flags.get("pointer"):
                self.unsup(n, "pointer", f"POINTER variable {name} is not modelled")
            init = ent.items[3] if len(ent.items) > 3 else None
            if init is not None:
                expr_node = init.items[1]
                e = self.eb().expr(expr_node)
                if flags.get("parameter"):
                    sym.parameter = self._const(e, t, name, line)
                else:
                    sym.save = True
                    try:
                        self.data_values[name] = eval_const(e, self.scope.params())
                    except Exception:
                        self.data_values[name] = None
                    if self.scope.module is None or self.scope.parent is not None:
                        self.unsup(n, "unsupported-construct",
                                   f"initialised local {name} (implicit SAVE) is not modelled")
        if kind_error is not None:
            raise kind_error

    def _const(self, e, t, name, line):
        try:
            v = eval_const(e, self.scope.params())
        except Exception:
            self.diagnostics.append(ir.Diagnostic("unresolved-parameter", f"PARAMETER {name} could not be evaluated", line))
            return None
        if isinstance(v, list) and t is not None:
            conv = {"integer": int, "real": float, "complex": complex}.get(t.base)
            return [conv(x) for x in v] if conv else v
        if t is not None:
            if t.base == "integer" and isinstance(v, (int, float)):
                v = int(v)
            elif t.base == "real" and isinstance(v, (int, float)):
                v = float(v)
            elif t.base == "complex" and isinstance(v, (int, float, complex)):
                v = complex(v)
        return v

    def s_Parameter_Stmt(self, n):
        line = stmt_line(n, self.src)
        for d in list_items(n.items[1]):
            name = lname(d.items[0])
            sym = self.declare(name, line)
            sym.is_parameter = True
            e = self.eb().expr(d.items[1])
            t = sym.ftype or self.scope.type_of(name)
            if sym.ftype is None:
                sym.ftype = t
            sym.parameter = self._const(e, t, name, line)

    def s_Dimension_Stmt(self, n):
        line = stmt_line(n, self.src)
        for name, spec in n.items[0]:
            self.declare(lname(name), line).dims = self.dims(spec)

    def s_Intent_Stmt(self, n):
        intent = str(n.items[0]).lower().replace(" ", "")
        for x in list_items(n.items[1]):
            self.declare(lname(x), stmt_line(n, self.src)).intent = intent

    def s_Optional_Stmt(self, n):
        for x in list_items(n.items[-1]):
            self.declare(lname(x), stmt_line(n, self.src)).optional = True

    def s_Value_Stmt(self, n):
        for x in list_items(n.items[-1]):
            self.declare(lname(x), stmt_line(n, self.src)).value = True

    def s_Save_Stmt(self, n):
        for x in list_items(n.items[-1]) if n.items[-1] is not None else []:
            if type(x).__name__ == "Name":
                self.declare(lname(x), stmt_line(n, self.src)).save = True

    def s_External_Stmt(self, n):
        for x in list_items(n.items[-1]):
            name = lname(x)
            self.declare(name, stmt_line(n, self.src)).external = True
            self.user_functions.add(name)

    def s_Intrinsic_Stmt(self, n):
        for x in list_items(n.items[-1]):
            self.declare(lname(x), stmt_line(n, self.src)).intrinsic = True

    def s_Allocatable_Stmt(self, n):
        for x in list_items(n.items[-1]):
            if type(x).__name__ == "Name":
                self.declare(lname(x), stmt_line(n, self.src)).allocatable = True
            else:
                s = self.declare(lname(x.items[0]), stmt_line(n, self.src))
                s.allocatable = True
                s.dims = self.dims(x.items[1])

    def s_Target_Stmt(self, n):
        pass

    def s_Access_Stmt(self, n):
        pass

    def s_Common_Stmt(self, n):
        line = stmt_line(n, self.src)
        for blk, objs in n.items[0]:
            bname = lname(blk) if blk is not None else ""
            names = []
            for o in list_items(objs):
                if type(o).__name__ == "Common_Block_Object":
                    name = lname(o.items[0])
                    sym = self.declare(name, line)
                    sym.dims = self.dims(o.items[1])
                else:
                    name = lname(o)
                    sym = self.declare(name, line)
                sym.common = bname
                names.append(name)
            existing = [c for c in self.commons if c.name == bname]
            if existing:
                existing[0].variables += names
            else:
                self.commons.append(ir.CommonBlock(bname, names, line))

    def s_Equivalence_Stmt(self, n):
        self.unsup(n, "equivalence", "EQUIVALENCE makes variables share storage; the IR cannot model the aliasing")

    def s_Cray_Pointer_Stmt(self, n):
        self.unsup(n, "cray-pointer", "Cray POINTER is not modelled")

    def s_Pointer_Stmt(self, n):
        for x in list_items(n.items[-1]):
            nm = lname(x.items[0]) if getattr(x, "items", None) and type(x).__name__ != "Name" else lname(x)
            self.declare(nm, stmt_line(n, self.src)).pointer = True
        self.unsup(n, "pointer", "POINTER variables are not modelled")

    def s_Derived_Type_Def(self, n):
        name = None
        for c in children(n):
            if type(c).__name__ == "Derived_Type_Stmt":
                name = lname(c.items[1])
        if name:
            self.scope.derived_types.add(name)
        self.unsup(n, "derived-type", f"derived type definition {name} is not modelled")

    def s_Data_Stmt(self, n):
        """DATA of whole variables with constant values: kept for the kernel to decide
        (a table never assigned in the kernel is a constant; otherwise SAVE state)."""
        eb = self.eb()
        for dset in list_items(n.items[0]) if type(n.items[0]).__name__ != "Data_Stmt_Set" else list(n.items):
            objs, vals = dset.items
            names = []
            for o in list_items(objs):
                if type(o).__name__ != "Name":
                    self.unsup(n, "unsupported-construct", f"DATA for {o} (element or implied DO) is not modelled")
                    return
                names.append(lname(o))
            values = []
            for v in list_items(vals):
                if type(v).__name__ == "Data_Stmt_Value":
                    rep, const = v.items
                    count = int(eval_const(eb.expr(rep), self.scope.params())) if rep is not None else 1
                    values += [eval_const(eb.expr(const), self.scope.params())] * count
                else:
                    values.append(eval_const(eb.expr(v), self.scope.params()))
            self.data_sets.append((names, values, n))

    def s_Format_Stmt(self, n):
        self.unsup(n, "io-in-kernel", "FORMAT statement (I/O) inside a kernel")

    def s_Namelist_Stmt(self, n):
        self.unsup(n, "io-in-kernel", "NAMELIST (I/O) inside a kernel")

    def s_Entry_Stmt(self, n):
        self.unsup(n, "entry", "ENTRY gives the routine a second entry point; not modelled")

    def s_Interface_Block(self, n):
        for st in find_nodes(n, (F.Subroutine_Stmt, F.Function_Stmt)):
            name = lname(st.items[1])
            self.declare(name, stmt_line(n, self.src)).external = True
            self.user_functions.add(name)

    def s_Stmt_Function_Stmt(self, n):
        """``f(i, j) = expr`` among the declarations: a statement function, or the first
        assignment to an array the parser could not know (one from a module). Decided by
        the symbol table once the whole specification part is read."""
        self.stmt_functions.append(n)

    def statement_functions(self, sb: "StmtBuilder") -> list[ir.Stmt]:
        """Assignments for the statement-function look-alikes whose name is an array (in
        order, they run first), Unsupported nodes for the rest."""
        out: list[ir.Stmt] = []
        for n in self.stmt_functions:
            name = lname(n.items[0])
            s = self.scope.lookup(name)
            line = stmt_line(n, self.src)
            if s is not None and s.dims:
                subs = [ir.Name(lname(a), ftype=self.scope.type_of(lname(a))) for a in list_items(n.items[1])]
                try:
                    value = sb.e(n.items[2])
                except Unsup as u:
                    out.append(ir.Unsupported(u.construct, u.reason, str(n).strip(), line=line, label=stmt_label(n)))
                    continue
                target = ir.ArrayRef(name, subs, ftype=s.ftype or self.scope.type_of(name))
                out.append(ir.Assign(target, value, line=line, label=stmt_label(n)))
            elif s is not None and s.bad:
                out.append(ir.Unsupported(s.bad_code, f"{name}(...) = ... cannot be read: {s.bad}", str(n).strip(),
                                          line=line))
            else:
                out.append(ir.Unsupported("statement-function", f"statement function {name} is not modelled (if "
                                          f"{name} is an array of a module, give port-fortran the file of that "
                                          "module)", str(n).strip(), line=line, label=stmt_label(n)))
        return out


# --------------------------------------------------------------------------- statements

_IO = {"Write_Stmt", "Read_Stmt", "Print_Stmt", "Open_Stmt", "Close_Stmt", "Inquire_Stmt", "Rewind_Stmt",
       "Backspace_Stmt", "Endfile_Stmt", "Flush_Stmt", "Format_Stmt", "Wait_Stmt"}
_DO_CONSTRUCTS = {"Block_Nonlabel_Do_Construct", "Block_Label_Do_Construct", "Action_Term_Do_Construct",
                  "Nonblock_Do_Construct"}


class StmtBuilder:
    """Execution part -> list of ``ir.Stmt``."""

    def __init__(self, scope: Scope, src: SourceText, user_functions: set[str]):
        self.scope = scope
        self.src = src
        self.eb = ExprBuilder(scope, user_functions)
        self.calls: list[str] = []
        self.started = False  # an executable statement has been seen (statement functions come first)

    def line(self, n) -> int:
        return stmt_line(n, self.src)

    def unsup(self, n, construct, reason) -> ir.Unsupported:
        return ir.Unsupported(construct, reason, str(n).strip(), line=self.line(n), label=stmt_label(n))

    def block(self, nodes: list) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        i = 0
        nodes = [n for n in nodes if n is not None]
        while i < len(nodes):
            n = nodes[i]
            cls = type(n).__name__
            if cls in ("Label_Do_Stmt", "Nonlabel_Do_Stmt"):
                # a DO sharing its terminating statement with an enclosing one: fparser
                # flattens it; the rest of the list is its body
                out.append(self.do_loop(n, nodes[i + 1:]))
                break
            out.extend(self.stmt(n))
            i += 1
        return out

    def stmt(self, n) -> list[ir.Stmt]:
        cls = type(n).__name__
        if cls == "Comment":
            return []
        raw = raw_line(n)
        if cls == "Continue_Stmt" and raw in self.src.replaced:
            construct, reason, text = self.src.replaced[raw]
            return [ir.Unsupported(construct, reason, text, line=self.line(n), label=stmt_label(n))]
        if cls in _IO:
            return [self.unsup(n, "io-in-kernel", f"{cls.split('_')[0].upper()} statement (I/O) inside a kernel")]
        meth = getattr(self, "s_" + cls, None)
        if meth is None:
            return [self.unsup(n, "unsupported-construct", f"{cls.replace('_', ' ')} is not modelled")]
        try:
            res = meth(n)
        except Unsup as u:
            return [self.unsup(n, u.construct, u.reason)]
        except Exception as exc:  # a form this visitor does not know: kept, explained
            return [self.unsup(n, "unsupported-construct",
                               f"{cls.replace('_', ' ')} not modelled ({type(exc).__name__}: {exc})")]
        self.started = True
        res = res if isinstance(res, list) else [res]
        line = self.line(n)
        for r in res:
            for x in ir.walk([r]):
                if not x.line:
                    x.line = line
        return res

    def e(self, n) -> ir.Expr:
        return self.eb.expr(n)

    def _stamp(self, s: ir.Stmt, n) -> ir.Stmt:
        s.line = self.line(n)
        s.label = stmt_label(n)
        return s

    # -- simple statements
    def s_Assignment_Stmt(self, n):
        lhs, _, rhs = n.items
        if type(lhs).__name__ in ("Part_Ref", "Intrinsic_Function_Reference", "Structure_Constructor"):
            name = lname(lhs.items[0])
            s = self.scope.lookup(name)
            if s is not None and s.bad and not s.dims:
                raise Unsup(s.bad_code, f"{name}(...) = ... cannot be read: {s.bad}")
            if not (s is not None and s.dims):
                t = self.scope.type_of(name)
                if t is not None and t.base == "character" and s is not None and s.typed:
                    raise Unsup("unsupported-construct", f"assignment to character substring {lhs} is not modelled")
                raise Unsup("statement-function", f"statement function {name} is not modelled (if {name} is an "
                            "array of a module, give port-fortran the file of that module)")
        target = self.e(lhs)
        if not isinstance(target, (ir.Name, ir.ArrayRef)):
            raise Unsup("unsupported-construct", f"assignment target {lhs} is not modelled")
        return self._stamp(ir.Assign(target, self.e(rhs)), n)

    def s_Continue_Stmt(self, n):
        return self._stamp(ir.Continue(), n)

    def s_Goto_Stmt(self, n):
        return self._stamp(ir.Goto(int(str(n.items[0]))), n)

    def s_Computed_Goto_Stmt(self, n):
        return self._stamp(ir.ComputedGoto([int(str(x)) for x in list_items(n.items[0])], self.e(n.items[1])), n)

    def s_Arithmetic_If_Stmt(self, n):
        e, a, b, c = n.items
        return self._stamp(ir.ArithmeticIf(self.e(e), (int(str(a)), int(str(b)), int(str(c)))), n)

    def s_Cycle_Stmt(self, n):
        nm = n.items[1] if len(n.items) > 1 else None
        return self._stamp(ir.Cycle(lname(nm) if nm is not None else None), n)

    def s_Exit_Stmt(self, n):
        nm = n.items[1] if len(n.items) > 1 else None
        return self._stamp(ir.Exit(lname(nm) if nm is not None else None), n)

    def s_Return_Stmt(self, n):
        if n.items and n.items[0] is not None:
            raise Unsup("unsupported-construct", f"alternate RETURN {n} is not modelled")
        return self._stamp(ir.Return(), n)

    def s_Stop_Stmt(self, n):
        code = n.items[1] if len(n.items) > 1 else None
        ce = None
        if code is not None:
            txt = str(code).strip()
            if txt.isdigit():
                ce = ir.Literal(int(txt), txt, ftype=ir.INTEGER)
            elif txt[:1] in "'\"":
                ce = ir.Literal(txt[1:-1], txt, ftype=FType("character", 1, len(txt) - 2))
            else:
                try:
                    ce = self.e(code)
                except Unsup:
                    ce = ir.Literal(txt, txt)
        return self._stamp(ir.Stop(ce), n)

    def s_Error_Stop_Stmt(self, n):
        return self._stamp(ir.Stop(None), n)

    def s_Call_Stmt(self, n):
        name = lname(n.items[0])
        if type(n.items[0]).__name__ != "Name":
            raise Unsup("derived-type", f"type-bound procedure call {n} is not modelled")
        args, kws = self.eb.args(n.items[1])
        if kws:
            # keyword args kept positionally after the positional ones (names lost) would be a guess
            raise Unsup("unsupported-construct", f"CALL with keyword arguments {n} is not modelled")
        if name not in self.calls:
            self.calls.append(name)
        return self._stamp(ir.CallStmt(name, args), n)

    def s_Entry_Stmt(self, n):
        raise Unsup("entry", "ENTRY gives the routine a second entry point; not modelled")

    def s_Pointer_Assignment_Stmt(self, n):
        raise Unsup("pointer", "pointer assignment is not modelled")

    def s_Nullify_Stmt(self, n):
        raise Unsup("pointer", "NULLIFY is not modelled")

    def s_Allocate_Stmt(self, n):
        raise Unsup("unsupported-construct", "ALLOCATE inside a kernel is not modelled")

    def s_Deallocate_Stmt(self, n):
        raise Unsup("unsupported-construct", "DEALLOCATE inside a kernel is not modelled")

    def s_Data_Stmt(self, n):
        raise Unsup("unsupported-construct", "DATA initialises variables with implicit SAVE; not modelled")

    def s_Format_Stmt(self, n):
        raise Unsup("io-in-kernel", "FORMAT statement (I/O) inside a kernel")

    # -- IF
    def s_If_Stmt(self, n):
        cond, action = n.items
        body = self.stmt(action)
        return self._stamp(ir.If([(self.e(cond), body)]), n)

    def s_If_Construct(self, n):
        kids = stmt_children(n)
        node = ir.If()
        cur_body: list = []
        cur_cond = None
        else_mode = False
        end_label = None
        for c in kids:
            cls = type(c).__name__
            if cls == "If_Then_Stmt":
                cur_cond = self.e(c.items[0])
                node.line = self.line(c)
                node.label = stmt_label(c)
            elif cls == "Else_If_Stmt":
                node.branches.append((cur_cond, self.block(cur_body)))
                cur_body = []
                cur_cond = self.e(c.items[0])
            elif cls == "Else_Stmt":
                node.branches.append((cur_cond, self.block(cur_body)))
                cur_body = []
                else_mode = True
            elif cls == "End_If_Stmt":
                end_label = stmt_label(c)
            else:
                cur_body.append(c)
        if else_mode:
            node.else_body = self.block(cur_body)
        else:
            node.branches.append((cur_cond, self.block(cur_body)))
        out = [node]
        if end_label is not None:
            out.append(ir.Continue(line=self.line(kids[-1]), label=end_label))
        return out

    # -- SELECT CASE
    def s_Case_Construct(self, n):
        kids = stmt_children(n)
        node = ir.SelectCase(ir.Literal(0))
        cur = None
        body: list = []
        end_label = None
        for c in kids:
            cls = type(c).__name__
            if cls == "Select_Case_Stmt":
                node.expr = self.e(c.items[0])
                node.line = self.line(c)
                node.label = stmt_label(c)
            elif cls == "Case_Stmt":
                if cur is not None:
                    cur.body = self.block(body)
                    node.cases.append(cur)
                body = []
                cur = ir.Case(self.case_values(c.items[0]), [])
            elif cls == "End_Select_Stmt":
                end_label = stmt_label(c)
            else:
                body.append(c)
        if cur is not None:
            cur.body = self.block(body)
            node.cases.append(cur)
        out = [node]
        if end_label is not None:
            out.append(ir.Continue(line=self.line(kids[-1]), label=end_label))
        return out

    def case_values(self, sel) -> list[ir.Expr]:
        if sel is None or str(sel).strip().upper() == "DEFAULT":
            return []
        lst = sel.items[0]
        vals = []
        for v in list_items(lst):
            if type(v).__name__ == "Case_Value_Range":
                lo, hi = v.items
                vals.append(ir.Slice(self.e(lo) if lo is not None else None, self.e(hi) if hi is not None else None))
            else:
                vals.append(self.e(v))
        return vals

    # -- WHERE
    def s_Where_Stmt(self, n):
        mask, assign = n.items
        return self._stamp(ir.Where(self.e(mask), self.stmt(assign)), n)

    def s_Where_Construct(self, n):
        node = ir.Where(ir.Literal(True))
        body: list = []
        els = False
        for c in stmt_children(n):
            cls = type(c).__name__
            if cls == "Where_Construct_Stmt":
                node.mask = self.e(c.items[0])
                node.line = self.line(c)
                node.label = stmt_label(c)
            elif cls == "Masked_Elsewhere_Stmt":
                raise Unsup("unsupported-construct", "ELSEWHERE (mask) is not modelled")
            elif cls == "Elsewhere_Stmt":
                node.body = self.block(body)
                body = []
                els = True
            elif cls == "End_Where_Stmt":
                pass
            else:
                body.append(c)
        if els:
            node.elsewhere = self.block(body)
        else:
            node.body = self.block(body)
        return node

    # -- DO
    def _do_construct(self, n):
        kids = stmt_children(n)
        return [self.do_loop(kids[0], kids[1:])]

    s_Block_Nonlabel_Do_Construct = _do_construct
    s_Block_Label_Do_Construct = _do_construct
    s_Action_Term_Do_Construct = _do_construct
    s_Nonblock_Do_Construct = _do_construct

    def do_loop(self, head, rest: list) -> ir.Stmt:
        cls = type(head).__name__
        line = self.line(head)
        label = stmt_label(head)
        cname = getattr(head.item, "name", None) if getattr(head, "item", None) is not None else None
        cname = cname.lower() if cname else None
        end_label = None
        if cls == "Label_Do_Stmt":
            end_label = int(str(head.items[1]))
            ctl = head.items[2]
        else:
            ctl = head.items[1]
        body_nodes = list(rest)
        if body_nodes and type(body_nodes[-1]).__name__ == "End_Do_Stmt":
            end = body_nodes.pop()
            lab = stmt_label(end)
            if lab is not None:
                # `10 end do`: the label belongs to the loop's last statement
                body_nodes.append(end)
        body: list[ir.Stmt] = []
        for s in self.block_with_enddo(body_nodes):
            body.append(s)
        try:
            if ctl is None:
                node = ir.DoWhile(ir.Literal(True, ".true.", ftype=ir.LOGICAL), body, cname)
            elif ctl.items[0] is not None:
                node = ir.DoWhile(self.e(ctl.items[0]), body, cname)
            elif ctl.items[1] is None:
                return ir.Unsupported("unsupported-construct", "DO CONCURRENT is not modelled", str(head).strip(),
                                      line=line, label=label)
            else:
                var, bounds = ctl.items[1]
                start, end_ = self.e(bounds[0]), self.e(bounds[1])
                step = self.e(bounds[2]) if len(bounds) > 2 and bounds[2] is not None else None
                vname = lname(var)
                node = ir.Do(vname, start, end_, step, body, cname, end_label)
        except Unsup as u:
            return ir.Unsupported(u.construct, u.reason, str(head), line=line, label=label)
        node.line = line
        node.label = label
        return node

    def block_with_enddo(self, nodes):
        out = []
        for s in self.block([n for n in nodes if type(n).__name__ != "End_Do_Stmt"]):
            out.append(s)
        for n in nodes:
            if type(n).__name__ == "End_Do_Stmt":
                out.append(ir.Continue(line=self.line(n), label=stmt_label(n)))
        return out

    # -- constructs the IR does not model
    def s_Forall_Construct(self, n):
        raise Unsup("unsupported-construct", "FORALL is not modelled")

    def s_Forall_Stmt(self, n):
        raise Unsup("unsupported-construct", "FORALL is not modelled")

    def s_Associate_Construct(self, n):
        raise Unsup("unsupported-construct", "ASSOCIATE is not modelled")

    def s_Block_Construct(self, n):
        raise Unsup("unsupported-construct", "BLOCK construct is not modelled")

    def s_Select_Type_Construct(self, n):
        raise Unsup("derived-type", "SELECT TYPE is not modelled")


# --------------------------------------------------------------------------- program units

_OMP_RE = re.compile(r"^\s*[!cC*]\$omp", re.IGNORECASE)


def expr_names(e: ir.Expr):
    for x in ir.walk_expr(e):
        if isinstance(x, (ir.Name, ir.ArrayRef)):
            yield x.name


stmt_exprs = ir.stmt_exprs  # kept here for the analysis modules that import it from build


def first_use_line(body: list[ir.Stmt], names: set[str]) -> int:
    """Line of the first statement that mentions one of ``names`` (0 if none does)."""
    for s in ir.walk(body):
        if isinstance(s, ir.Do) and s.var in names:
            return s.line
        for e in stmt_exprs(s):
            if any(nm in names for nm in expr_names(e)):
                return s.line
    return 0


def referenced_names(body: list[ir.Stmt]) -> list[str]:
    seen: dict[str, None] = {}
    for s in ir.walk(body):
        if isinstance(s, ir.Do):
            seen.setdefault(s.var)
        for e in stmt_exprs(s):
            for nm in expr_names(e):
                seen.setdefault(nm)
    return list(seen)


def module_entities(u, scope: Scope) -> dict[str, str]:
    """A module's names for the program model: variables, parameters, procedures (its own
    and interface bodies) and generic interfaces with their specific procedures."""
    from fparser.two.utils import walk
    out: dict[str, str] = {}
    for s in scope.syms.values():
        out[s.name] = "parameter" if s.is_parameter else ("procedure" if s.external else "variable")
    spec = [c for c in stmt_children(u) if type(c).__name__ == "Specification_Part"]
    for ib in walk(spec, (F.Interface_Block,)):
        head = stmt_children(ib)[0] if stmt_children(ib) else None
        gen = head.items[0] if head is not None and type(head).__name__ == "Interface_Stmt" else None
        if gen is None or type(gen).__name__ != "Name":
            continue
        specific = [lname(x) for st in walk(ib, (F.Procedure_Stmt,)) for x in list_items(st.items[0])]
        specific += [lname(st.items[1]) for st in walk(ib, (F.Subroutine_Stmt, F.Function_Stmt))]
        out[lname(gen)] = "generic:" + ",".join(dict.fromkeys(specific))
    for c in stmt_children(u):
        if type(c).__name__ == "Module_Subprogram_Part":
            for p in children(c):
                if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram"):
                    out.setdefault(lname(stmt_children(p)[0].items[1]), "procedure")
    return out


class FileBuilder:
    def __init__(self, src: SourceText, original_lines: list[str], modules: Optional[dict] = None,
                 module_notes: Optional[dict] = None):
        """``modules``: interfaces (``ir.ModuleInterface``) of modules defined in other files;
        ``module_notes``: why some USEd module was not taken (ambiguous, cyclic)."""
        self.src = src
        self.whole = src  # self.src is the unit being built (a slice of it)
        self.lines = original_lines
        self.modules = ModuleScopes(modules, module_notes)
        self._module_lines: dict[str, int] = {}
        self._module_uses: dict[str, list[str]] = {}
        self.user_functions: set[str] = set()
        self.out = ir.SourceFile(path=src.path, form=src.form, includes=list(src.includes),
                                 preprocessed=src.preprocessed)

    def build(self, tree) -> ir.SourceFile:
        return self.build_units([(self.src, tree)])

    def build_units(self, units: list) -> ir.SourceFile:
        """The IR of a file from the parse trees of its parts (``[(source slice, tree)]``,
        see ``parse.parse_units``): modules first, so USE in any unit resolves."""
        whole = self.src
        for _part, tree in units:
            for st in find_nodes(tree, (F.Function_Stmt,)):
                self.user_functions.add(lname(st.items[1]))
        for part, tree in units:
            self.src = part
            for u in children(tree):
                if type(u).__name__ == "Module":
                    self._guard(u, self.module_scope)
        for part, tree in units:
            self.src = part
            for u in children(tree):
                cls = type(u).__name__
                if cls == "Module":
                    self._guard(u, self.module_procs)
                elif cls in ("Subroutine_Subprogram", "Function_Subprogram"):
                    self._guard(u, lambda x: self.kernel(x, Scope(), None))
                elif cls in ("Main_Program", "Main_Program0"):
                    self._guard(u, self.program)
                elif cls in ("Comment", "Block_Data"):
                    continue
                else:
                    self.out.errors.append(ir.Diagnostic("unsupported-construct", f"{cls} at file level is not modelled",
                                                         stmt_line(u, self.src), self.src.path))
        self.src = whole
        for name, scope in self.modules.own.items():
            procs = [k for k in self.out.kernels if k.module == name and k.host is None]
            self.out.interfaces[name] = interface_of(name, scope, procs, self.src.path, self._module_lines.get(name, 0),
                                                     self._module_uses.get(name, ()))
        self.out.missing_modules = dict(self.modules.missing)
        return self.out

    def _guard(self, u, fn) -> None:
        try:
            fn(u)
        except Exception as exc:  # one bad unit must not lose the others
            self.out.errors.append(ir.Diagnostic("internal-error", f"front end failed on {type(u).__name__}: "
                                                 f"{type(exc).__name__}: {exc}", stmt_line(u, self.src), self.src.path))

    def module_scope(self, u):
        kids = stmt_children(u)
        name = lname(kids[0].items[1])
        self.out.modules.append(name)
        self._module_lines[name] = stmt_line(kids[0], self.src)
        scope = Scope(None, module=name)
        for c in kids:
            if type(c).__name__ == "Specification_Part":
                db = DeclBuilder(scope, self.src, self.modules, self.user_functions)
                db.visit(c)
                self._module_uses[name] = list(db.uses)
                for names, _values, _node in db.data_sets:  # module state initialised by DATA
                    for nm in names:
                        scope.local(nm).save = True
        for s in scope.syms.values():
            s.module = name
        self.modules[name] = scope
        self.out.module_entities[name] = module_entities(u, scope)

    def module_procs(self, u):
        kids = stmt_children(u)
        name = lname(kids[0].items[1])
        scope = self.modules[name]
        for c in kids:
            if type(c).__name__ == "Module_Subprogram_Part":
                for p in children(c):
                    if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram"):
                        self.kernel(p, Scope(scope, module=None), name)

    def program(self, u):
        """A main program is not a kernel (the hybrid mode handles its loops); its internal
        procedures are, with the program's variables as host variables. A program without
        a PROGRAM statement is named ``main`` (gfortran's MAIN__)."""
        kids = stmt_children(u)
        head = kids[0]
        pname = lname(head.items[1]) if type(head).__name__ == "Program_Stmt" else "main"
        self.out.programs.append(pname)
        scope = Scope()
        for c in kids:
            if type(c).__name__ == "Specification_Part":
                DeclBuilder(scope, self.src, self.modules, self.user_functions).visit(c)
        internal = [c for c in kids if type(c).__name__ == "Internal_Subprogram_Part"]
        if internal:
            # variables the program types implicitly (by using them) are host variables too
            body = []
            for c in kids:
                if type(c).__name__ == "Execution_Part":
                    body = StmtBuilder(scope, self.src, self.user_functions).block(children(c))
            for nm in referenced_names(body):
                if scope.lookup(nm) is None and scope.type_of(nm) is not None:
                    scope.local(nm).ftype = scope.type_of(nm)
        for c in internal:
            if type(c).__name__ == "Internal_Subprogram_Part":
                for p in stmt_children(c):
                    if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram"):
                        name = lname(stmt_children(p)[0].items[1])
                        self.out.internal_procedures.append(f"{pname}:{name}")
                        self._guard(p, lambda x: self.kernel(x, Scope(scope), None, host=pname,
                                                             host_kind="program"))

    def _missing_include_hint(self) -> str:
        """Why a name may have no type: an INCLUDE of the file was not found."""
        names = [re.search(r"'([^']+)'", msg) for (_f, _l, code, msg) in self.whole.errors if code == "include-not-found"]
        names = list(dict.fromkeys(m.group(1) for m in names if m))
        if names:
            return (f"; it may come from include file {', '.join(names)}, which was not found (add -I DIR)")
        return ": the routine would not compile"

    def _apply_data(self, k: ir.Kernel, db: DeclBuilder, scope: Scope) -> None:
        """DATA-initialised locals never assigned in the kernel are constants (their values
        go to ``Variable.parameter``); assigned ones are SAVE state: Unsupported."""
        written = set()
        for s in ir.walk(k.body):
            if isinstance(s, ir.Assign):
                written.add(s.target.name)
            elif isinstance(s, ir.CallStmt):
                written |= {a.name for a in s.args if isinstance(a, (ir.Name, ir.ArrayRef))}
            elif isinstance(s, ir.Do):
                written.add(s.var)
        env = scope.params()
        for names, values, node in db.data_sets:
            line = stmt_line(node, self.src)
            pos = 0
            for nm in names:
                v = k.locals.get(nm)
                if v is None or nm in written or v.common is not None:
                    why = "is an argument or COMMON variable" if v is None or v.common is not None else \
                        "is assigned in the kernel, so it keeps its value between calls (SAVE)"
                    k.unsupported.append(ir.Unsupported("unsupported-construct", f"DATA-initialised {nm} {why}",
                                                        str(node).strip(), line=line))
                    return
                size = 1
                try:
                    for d in v.dims:
                        lo = eval_const(d.lower, env) if d.lower is not None else 1
                        size *= int(eval_const(d.upper, env)) - int(lo) + 1
                except Exception:
                    k.unsupported.append(ir.Unsupported("unsupported-construct", f"DATA for {nm} of unknown size",
                                                        str(node).strip(), line=line))
                    return
                chunk = values[pos:pos + size]
                pos += size
                if len(chunk) != size:
                    k.unsupported.append(ir.Unsupported("unsupported-construct", f"DATA for {nm}: {len(chunk)} values "
                                                        f"for {size} elements", str(node).strip(), line=line))
                    return
                conv = {"integer": int, "real": float, "complex": complex, "logical": bool}.get(v.ftype.base, lambda x: x)
                vals = [conv(x) for x in chunk]
                v.parameter = vals if v.dims else vals[0]
                v.save = True

    def kernel(self, u, scope: Scope, module: Optional[str], host: Optional[str] = None,
               host_kind: str = "routine") -> ir.Kernel:
        kids = stmt_children(u)
        head = kids[0]
        kind = "function" if type(head).__name__ == "Function_Stmt" else "subroutine"
        name = lname(head.items[1])
        arg_names = []
        alt_return = False
        for a in list_items(head.items[2]):
            if str(a).strip() == "*":
                alt_return = True
                continue
            arg_names.append(lname(a))
        start = stmt_line(head, self.src)
        end_node = kids[-1]
        end_raw = end_node.item.span[1] if getattr(end_node, "item", None) is not None else raw_line(end_node)
        end = self.src.origin(end_raw).main_line
        k = ir.Kernel(name=name, kind=kind, file=self.src.path, line_start=start, line_end=end, module=module,
                      host=host)
        db = DeclBuilder(scope, self.src, self.modules, self.user_functions)
        result_name = name
        prefix_type = None
        if kind == "function":
            prefix, suffix = head.items[0], head.items[3]
            if prefix is not None:
                for p in prefix.items if hasattr(prefix, "items") else []:
                    for q in (p if isinstance(p, tuple) else (p,)):
                        if type(q).__name__ == "Intrinsic_Type_Spec":
                            prefix_type = q
                        elif type(q).__name__ == "Declaration_Type_Spec":
                            k.unsupported.append(ir.Unsupported("derived-type", "function of derived type", str(head), line=start))
            if suffix is not None and suffix.items and suffix.items[0] is not None:
                result_name = lname(suffix.items[0])
        for c in kids:
            if type(c).__name__ == "Specification_Part":
                db.visit(c)
        if prefix_type is not None:
            try:
                rs = scope.local(result_name)
                rs.ftype = db.type_spec(prefix_type)
                rs.typed = True
            except Unsup as u2:
                k.unsupported.append(ir.Unsupported(u2.construct, u2.reason, str(head), line=start))
        sb = StmtBuilder(scope, self.src, self.user_functions)
        body: list[ir.Stmt] = db.statement_functions(sb)
        internal = []
        for c in kids:
            cls = type(c).__name__
            if cls == "Execution_Part":
                body = body + sb.block(children(c))
            elif cls == "Internal_Subprogram_Part":
                internal = [p for p in children(c) if type(p).__name__ in ("Subroutine_Subprogram", "Function_Subprogram")]
        k.body = body
        k.implicit_none = scope.implicit_none
        k.uses = db.uses
        k.commons = db.commons
        k.diagnostics = list(db.diagnostics)
        if alt_return:
            k.unsupported.append(ir.Unsupported("unsupported-construct", "alternate return argument (*)", str(head), line=start))
        k.unsupported += db.unsupported
        k.unsupported += [s for s in ir.walk(body) if isinstance(s, ir.Unsupported)]
        # arguments
        for pos, an in enumerate(arg_names):
            s = scope.syms.get(an) or Sym(an)
            t = s.ftype or scope.type_of(an)
            if t is None:
                k.diagnostics.append(ir.Diagnostic("untyped", f"argument {an} has no type (IMPLICIT NONE)", start))
                t = FType("real", 4)
            if s.external or (an in sb.calls and not s.dims):
                k.unsupported.append(ir.Unsupported("unsupported-construct", f"procedure argument {an} is not modelled",
                                                    str(head), line=start))
            arg = ir.Argument(name=an, ftype=t, dims=list(s.dims or []), allocatable=s.allocatable, save=s.save,
                              line=s.line or start, position=pos, intent=s.intent or "inout",
                              intent_declared=s.intent is not None, value=s.value, optional=s.optional)
            if s.allocatable:
                k.unsupported.append(ir.Unsupported("unsupported-construct", f"allocatable argument {an} is not modelled",
                                                    str(head), line=start))
            k.args.append(arg)
        if kind == "function":
            rs = scope.syms.get(result_name) or Sym(result_name)
            rt = rs.ftype or scope.type_of(result_name)
            k.result = ir.Variable(result_name, rt or FType("real", 4), list(rs.dims or []), line=start)
        # locals, module variables
        env = scope.params()
        dim_names = []
        for sym in scope.syms.values():
            for d in sym.dims or []:
                for e in (d.lower, d.upper):
                    if e is not None:
                        dim_names += list(expr_names(e))
        names = list(scope.syms) + [n for n in referenced_names(body) + dim_names if n not in scope.syms]
        names = list(dict.fromkeys(names))
        unknown: dict[str, tuple[str, str]] = {}  # name -> (construct, reason): refused, never guessed
        wildcard = {m: ln for m, (ln, only, _note) in scope.all_missing_modules().items() if not only}
        for nm in names:
            if nm in arg_names or nm == result_name:
                continue
            s = scope.lookup(nm)
            if s is not None and s.bad and nm not in scope.syms:  # a local's bad declaration is reported already
                unknown[nm] = (s.bad_code, s.bad)
                continue
            if s is not None and (s.external or (s.intrinsic and not s.dims)):
                continue
            if s is None:
                t = scope.type_of(nm)
                if wildcard:
                    mods = ", ".join(f"{m} (USE at line {ln})" for m, ln in sorted(wildcard.items()))
                    unknown[nm] = ("unknown-module", f"{nm} is not declared here and may come from module {mods}, "
                                   "which was not found: give port-fortran the file that defines it too")
                    continue
                if t is None:
                    unknown[nm] = ("untyped", f"{nm} has no type (IMPLICIT NONE)" + self._missing_include_hint())
                    continue
                k.locals[nm] = ir.Variable(nm, t, line=start)
                continue
            t = s.ftype or scope.type_of(nm) or FType("real", 4)
            v = ir.Variable(nm, t, list(s.dims or []), parameter=s.parameter if s.is_parameter else None,
                            allocatable=s.allocatable, save=s.save, common=s.common, module=s.module, line=s.line)
            if nm in scope.syms:
                k.locals[nm] = v
            elif s.module is not None:
                if s.is_parameter:
                    k.locals[nm] = v
                else:
                    k.module_vars[nm] = v
            elif s.is_parameter:  # a host's constant: a constant here too
                k.locals[nm] = v
            else:  # host association (internal procedure): shared state, like a module variable
                k.host_vars[nm] = v
        for nm, (construct, why) in unknown.items():
            k.unsupported.append(ir.Unsupported(construct, why, nm, line=first_use_line(body, {nm}) or start))
        if k.host_vars:
            names = sorted(k.host_vars)
            k.unsupported.append(ir.Unsupported(
                "host-association", f"uses {', '.join(names)} of its host {host_kind} {host} (host association): "
                "the port cannot reach the host's variables yet; pass them as arguments",
                ", ".join(names), line=first_use_line(body, set(names)) or start))
        self._apply_data(k, db, scope)
        calls = []
        for c in sb.calls + sb.eb.called:
            if c not in calls:
                calls.append(c)
        k.calls = calls
        lines = self.lines[start - 1:end] if start and end else []
        k.source_text = "\n".join(lines)
        k.has_openmp = any(_OMP_RE.match(ln) for ln in lines)
        if host is not None:
            k.diagnostics.append(ir.Diagnostic("internal-procedure", f"{name} is an internal procedure of {host_kind} "
                                               f"{host}", start))
        self.out.kernels.append(k)
        if internal:
            # the routine's implicitly typed variables are host variables of its internal
            # procedures too (they are not in the scope until now)
            for nm, v in k.locals.items():
                if nm not in scope.syms:
                    sym = scope.local(nm)
                    sym.ftype = v.ftype
        for p in internal:
            self._guard(p, lambda x: self.kernel(x, Scope(scope), module, host=name, host_kind=kind))
        return k
