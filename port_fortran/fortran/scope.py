"""Symbols of a scoping unit while the front end builds the IR: what each name is (type,
shape, parameter value, COMMON, module), module scopes from other files' interfaces, and
the ``Unsup`` signal a visitor raises for what the IR does not model."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import ftypes, ir
from .ir import FType


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
    len_runtime: Optional[str] = None  # a CHARACTER length computed at run time (``len=n``), its text
    len_expr: Any = None  # ... and its expression (ir.Expr), when the front end reads it
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
    """A Fortran form the front end does not model (``construct`` is its reason code)."""

    def __init__(self, construct: str, reason: str):
        super().__init__(reason)
        self.construct = construct
        self.reason = reason


def internal_error(what: str, exc: BaseException) -> str:
    """The reason of an ``internal-error``: a front-end visitor failed on ``what`` (an
    fparser node class or a unit). A bug of port-fortran, never labelled as a limit of
    Fortran (``unsupported-construct``)."""
    return (f"front end failed on {what.replace('_', ' ')}: {type(exc).__name__}: {exc} "
            "(a port-fortran bug, not a limit of the code: please report it)")


# --------------------------------------------------------------------------- helpers

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
