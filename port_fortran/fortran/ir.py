"""The kernel IR: the one model of a Fortran routine that every later stage reads.

This module is the contract between the front end (``fortran/``), the translator
(``translate/``), the harness (``harness/``), the agents and the reports. It holds plain
dataclasses and a few pure helpers; it imports nothing from the rest of the package.

Conventions
-----------
* Names are lower case (Fortran is case-insensitive).
* Every statement and every diagnostic carries the 1-based line of the *original* source
  file it came from (after include / preprocessing the front end maps lines back).
* Anything the front end cannot model becomes an :class:`Unsupported` statement (in the
  statement tree, where it occurred) *and* is listed in ``Kernel.unsupported``; nothing is
  dropped silently.
* Expressions carry their Fortran type in ``.ftype`` once the front end has typed them
  (``None`` only for things such as slices or character literals where no type applies).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Union

# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class FType:
    """A Fortran intrinsic type. ``kind`` is the byte size (gfortran's convention):
    integer(4), real(4)/real(8), complex(4)/complex(8) (kind of each part), logical(4).
    ``char_len`` is the length of a character variable (``None`` for ``len=*``)."""

    base: str  # 'integer' | 'real' | 'complex' | 'logical' | 'character'
    kind: int = 4
    char_len: Optional[int] = None

    @property
    def bytes(self) -> int:
        if self.base == "complex":
            return 2 * self.kind
        if self.base == "character":
            return self.char_len or 1
        return self.kind

    def __str__(self) -> str:  # e.g. real(8)
        if self.base == "character":
            return f"character(len={self.char_len if self.char_len is not None else '*'})"
        return f"{self.base}({self.kind})"


INTEGER = FType("integer", 4)
INTEGER8 = FType("integer", 8)
REAL4 = FType("real", 4)
REAL8 = FType("real", 8)
COMPLEX4 = FType("complex", 4)
COMPLEX8 = FType("complex", 8)
LOGICAL = FType("logical", 4)


# --------------------------------------------------------------------------- expressions


@dataclass
class Expr:
    ftype: Optional[FType] = field(default=None, kw_only=True)


@dataclass
class Literal(Expr):
    """A literal constant. ``value`` is the Python value (int, float, complex, bool, str);
    ``text`` the source spelling (kept so ``1.0d0`` vs ``1.0`` stays visible)."""

    value: Any
    text: str = ""


@dataclass
class Name(Expr):
    """A reference to a scalar, or to a whole array when used without subscripts."""

    name: str


@dataclass
class Slice(Expr):
    """``lo:hi:step`` inside an array reference; each part may be ``None``."""

    lower: Optional[Expr] = None
    upper: Optional[Expr] = None
    step: Optional[Expr] = None


@dataclass
class ArrayRef(Expr):
    """``a(i, j)`` or a section ``a(1:n, j)`` (then some subscripts are :class:`Slice`)."""

    name: str
    subscripts: list[Expr] = field(default_factory=list)


@dataclass
class BinOp(Expr):
    """Binary operation. ``op`` in: + - * / ** // == /= < <= > >= and or eqv neqv."""

    op: str
    left: Expr
    right: Expr


@dataclass
class UnaryOp(Expr):
    """``op`` in: - + not."""

    op: str
    operand: Expr


@dataclass
class FuncCall(Expr):
    """A function reference. ``intrinsic`` is True for Fortran intrinsics (abs, sqrt,
    max, mod, sum, dot_product, ...); otherwise ``name`` is a user function. Keyword
    arguments (``dim=1``) are kept in ``keywords``."""

    name: str
    args: list[Expr] = field(default_factory=list)
    intrinsic: bool = False
    keywords: dict[str, Expr] = field(default_factory=dict)


@dataclass
class ArrayConstructor(Expr):
    items: list[Expr] = field(default_factory=list)


# --------------------------------------------------------------------------- diagnostics


@dataclass
class Diagnostic:
    """A machine-readable ``code`` and a human ``message``, with the line it concerns.
    Codes are short kebab-case words, e.g. ``loop-carried-dependence``,
    ``indirect-write``, ``early-exit``, ``call-in-loop``, ``io-in-kernel``."""

    code: str
    message: str
    line: int
    file: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file else f"line {self.line}"
        return f"{where}: [{self.code}] {self.message}"


# --------------------------------------------------------------------------- statements


@dataclass
class Stmt:
    line: int = field(default=0, kw_only=True)
    label: Optional[int] = field(default=None, kw_only=True)  # statement label, if any


@dataclass
class Assign(Stmt):
    target: Union[Name, ArrayRef]
    value: Expr


@dataclass
class Reduction:
    """A reduction found in a loop: ``var`` is the scalar (or an array element invariant in
    the loop, e.g. ``y(j)`` accumulated over ``i``: then ``target`` is that ArrayRef).
    ``op`` in: sum, prod, min, max."""

    var: str
    op: str
    line: int
    target: Optional[Expr] = None
    # a section reduced elementwise (rms(m) under an inner do m = 1, 5): each subscript's
    # constant (lower, upper) over the inner loops; one accumulator array per thread
    section: Optional[tuple] = None


@dataclass
class Induction:
    """A scalar stepped by a loop-invariant amount once per iteration (``ix = ix + incx``
    as a direct statement of the loop body). At the start of iteration k (k = 0, 1, ...
    counted from the loop start) it holds ``v0 + k*step``, ``v0`` being its value before
    the loop; statements after the update see one more ``step``."""

    var: str
    step: Expr
    line: int  # the update statement
    live_after: bool = False  # its value after the loop is read later


@dataclass
class LoopInfo:
    """What the dependence analysis concluded about one loop (``fortran/dependence.py``).

    ``reasons`` codes: loop-carried-dependence (exact subscript test), possible-dependence (subscripts
    not analysable), scalar-dependence, last-value (a value computed in the loop, or the loop variable,
    is used after it), loc-reduction (maxloc/minloc style ``if (x(i) > m) then; m = x(i); k = i``),
    scattered-update (``h(idx(i)) = h(idx(i)) + 1``: atomics make it parallel), indirect-write,
    induction-variable (see ``inductions``), early-exit, call-in-loop, io-in-loop, unsupported-in-loop,
    loop-variable-modified, conditional-independence (independent only when ``condition`` holds: a
    stride may be zero, an offset small, two regions overlap). ``tightly_nested_parallel`` is 0 for a
    loop that is not parallel."""

    parallel: bool = False
    trip: Optional[Expr] = None  # number of iterations, when expressible
    reductions: list[Reduction] = field(default_factory=list)
    private: list[str] = field(default_factory=list)  # scalars privatisable per iteration
    last_private: list[str] = field(default_factory=list)  # private arrays (scalars) the last iteration writes (hands on)
    scratch_boxes: dict = field(default_factory=dict)  # of those, name -> the boxes each iteration writes (privatize)
    dead_after: list[str] = field(default_factory=list)  # private arrays no read after the loop sees (privatize)
    indirect: list[str] = field(default_factory=list)  # arrays subscripted by arrays
    scattered: list[str] = field(default_factory=list)  # arrays updated through indirect subscripts (atomics make it parallel)
    calls: list[str] = field(default_factory=list)  # routines called inside
    early_exit: bool = False  # EXIT, GOTO out of the loop or RETURN inside
    reasons: list[Diagnostic] = field(default_factory=list)  # why not parallel (empty when parallel)
    tightly_nested_parallel: int = 1  # depth of the perfectly nested parallel band starting here
    # induction variables ('induction-variable' in reasons): the only reason, the loop is parallel once rewritten
    inductions: list[Induction] = field(default_factory=list)
    # conditional independence: iterations are independent when ``condition`` holds (a
    # logical expression over values known where the loop starts: arguments, locals, outer
    # DO variables, induction variables before the loop); ``condition_args`` are the
    # arguments it depends on. Set only when the other reasons are fixable (inductions).
    condition: Optional[Expr] = None
    condition_args: list[str] = field(default_factory=list)
    interchanged: int = 0  # the line of the loop this one was inside before interchange.py turned the nest


@dataclass
class Do(Stmt):
    """Counted DO (block or labelled: ``do 10 i = 1, n`` ... ``10 continue``)."""

    var: str
    start: Expr
    end: Expr
    step: Optional[Expr] = None
    body: list[Stmt] = field(default_factory=list)
    construct_name: Optional[str] = None
    end_label: Optional[int] = None  # label that terminates a labelled DO
    info: LoopInfo = field(default_factory=LoopInfo)
    # last line in the main file of its END DO or terminating statement (continuations too); 0: unknown
    end_line: int = field(default=0, kw_only=True)


@dataclass
class DoWhile(Stmt):
    cond: Expr
    body: list[Stmt] = field(default_factory=list)
    construct_name: Optional[str] = None


@dataclass
class If(Stmt):
    """IF / ELSE IF / ELSE (block or logical IF). ``branches`` is [(condition, body)]."""

    branches: list[tuple[Expr, list[Stmt]]] = field(default_factory=list)
    else_body: list[Stmt] = field(default_factory=list)


@dataclass
class ArithmeticIf(Stmt):
    """``IF (e) l1, l2, l3``: go to l1 if e<0, l2 if e==0, l3 if e>0."""

    expr: Expr
    labels: tuple[int, int, int]


@dataclass
class Case:
    """One CASE: ``values`` are expressions or Slices (ranges ``lo:hi``); empty = DEFAULT."""

    values: list[Expr]
    body: list[Stmt]


@dataclass
class SelectCase(Stmt):
    expr: Expr
    cases: list[Case] = field(default_factory=list)


@dataclass
class Where(Stmt):
    mask: Expr
    body: list[Stmt] = field(default_factory=list)
    elsewhere: list[Stmt] = field(default_factory=list)


@dataclass
class Cycle(Stmt):
    construct_name: Optional[str] = None


@dataclass
class Exit(Stmt):
    construct_name: Optional[str] = None


@dataclass
class Goto(Stmt):
    target: int


@dataclass
class ComputedGoto(Stmt):
    targets: list[int]
    expr: Expr


@dataclass
class Continue(Stmt):
    """``CONTINUE`` (often just a label target)."""


@dataclass
class CallStmt(Stmt):
    name: str
    args: list[Expr] = field(default_factory=list)


@dataclass
class Return(Stmt):
    pass


@dataclass
class Stop(Stmt):
    code: Optional[Expr] = None


@dataclass
class Unsupported(Stmt):
    """Something the IR cannot model: kept, with the construct and why."""

    construct: str
    reason: str
    text: str = ""
    # what it does where the front end can tell (I/O, kept assignments): names it may read
    # (None: anything), names it may assign, labels it may jump to (ERR=, END=, EOR=)
    reads: Optional[list[str]] = None
    writes: Optional[list[str]] = None
    targets: list[int] = field(default_factory=list)


# --------------------------------------------------------------------------- declarations


@dataclass
class Dim:
    """One dimension. ``upper`` is None for assumed size (``*``); both are None for
    assumed shape (``:``) and deferred shape (allocatable ``:``)."""

    lower: Optional[Expr] = None  # None means 1 for explicit/assumed-size dims
    upper: Optional[Expr] = None
    assumed_shape: bool = False
    extent_given: bool = False  # declared ``*``, ``upper`` given by the configuration or call sites (no UBOUND of it)


@dataclass
class Variable:
    name: str
    ftype: FType
    dims: list[Dim] = field(default_factory=list)
    parameter: Optional[Any] = None  # resolved PARAMETER value
    allocatable: bool = False
    save: bool = False
    common: Optional[str] = None  # COMMON block name ('' for blank common)
    module: Optional[str] = None  # module it comes from (module variables)
    line: int = 0
    private: bool = False  # a PRIVATE module variable (only its module's procedures see it)

    @property
    def rank(self) -> int:
        return len(self.dims)


@dataclass
class Argument(Variable):
    position: int = 0
    intent: str = "inout"  # 'in' | 'out' | 'inout'
    intent_declared: bool = False
    value: bool = False  # VALUE attribute
    optional: bool = False
    # for each dim: (min, max) subscript the kernel can touch, as expressions in the
    # arguments, when the analysis can bound it (needed for assumed size ``*`` dims)
    access_bounds: list[Optional[tuple[Expr, Expr]]] = field(default_factory=list)
    used_as_index: bool = False  # appears inside subscripts of other arrays
    used_as_size: bool = False  # appears in the bounds of array arguments or loop bounds
    declared_one: bool = False  # the F77 ``x(1)`` idiom: last extent declared 1, used past it
    compared_with: list[Any] = field(default_factory=list)  # literal values it is compared to (flags)


@dataclass
class CommonBlock:
    name: str  # '' for blank common
    variables: list[str]
    line: int = 0


@dataclass
class Kernel:
    name: str
    kind: str  # 'subroutine' | 'function' | 'program' (SourceFile.program_units)
    file: str
    line_start: int
    line_end: int
    args: list[Argument] = field(default_factory=list)
    result: Optional[Variable] = None  # function result
    locals: dict[str, Variable] = field(default_factory=dict)
    commons: list[CommonBlock] = field(default_factory=list)
    module_vars: dict[str, Variable] = field(default_factory=dict)  # used module variables
    module_bounds: dict[str, list] = field(default_factory=dict)  # argfacts.module_array_bounds
    callee_module_reads: dict[str, Variable] = field(default_factory=dict)  # argfacts.callee_module_reads
    module: Optional[str] = None  # containing module, for module procedures
    host: Optional[str] = None  # the program or routine an internal procedure is CONTAINed in
    private: bool = False  # a module procedure PRIVATE to its module: nothing outside can call it
    host_vars: dict[str, Variable] = field(default_factory=dict)  # host variables it uses (host association)
    uses: list[str] = field(default_factory=list)  # USEd module names
    body: list[Stmt] = field(default_factory=list)
    unsupported: list[Unsupported] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)  # routines called (CALL and user functions)
    has_openmp: bool = False
    implicit_none: bool = False
    source_text: str = ""  # the routine's original text (for the LLM and reports)
    text_file: Optional[str] = None  # the #included header its text and lines come from, if any
    diagnostics: list[Diagnostic] = field(default_factory=list)  # warnings from analysis
    equivalences: list[list[str]] = field(default_factory=list)  # EQUIVALENCE classes (sharing a name: merged)
    accepts: list[tuple] = field(default_factory=list)  # (cond, line, what) ending the program: error_exits
    callee_tests: list[tuple] = field(default_factory=list)  # (comparison, line) its callees make: callee_tests

    def arg(self, name: str) -> Argument:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)

    def loops(self) -> list[Do]:
        return [s for s in walk(self.body) if isinstance(s, Do)]

    def constants(self) -> dict[str, Any]:
        """Values of the named constants the routine sees: its modules', its host's and its
        own (the nearest wins); a PARAMETER the front end left as an expression is
        evaluated from the others where it can be."""
        env: dict[str, Any] = {}
        pending: dict[str, Expr] = {}
        for scope in (self.module_vars, self.host_vars, self.locals):
            for n, v in scope.items():
                if v.parameter is None:
                    continue
                if isinstance(v.parameter, Expr):
                    pending[n] = v.parameter
                    env.pop(n, None)
                else:
                    env[n] = v.parameter
                    pending.pop(n, None)
        for _ in range(4):  # constants defined from constants
            for n, e in list(pending.items()):
                try:
                    env[n] = evaluate(e, env)
                    del pending[n]
                except (KeyError, ValueError, TypeError, ZeroDivisionError):
                    pass
        return env


@dataclass
class ModuleInterface:
    """What a module makes visible to code that USEs it (its own public names and those it
    re-exports): enough to type variables, resolve kinds and constants, and tell arrays
    from functions in another file. ``SourceFile.interfaces`` holds those of a file's
    modules; ``parse_file(..., modules={name: interface})`` feeds them to another file."""

    name: str
    file: str = ""
    line: int = 0
    variables: dict[str, Variable] = field(default_factory=dict)  # constants carry their value
    constants: list[str] = field(default_factory=list)  # PARAMETER names
    pointers: list[str] = field(default_factory=list)
    procedures: dict[str, Optional[FType]] = field(default_factory=dict)  # function result type; None: subroutine
    derived_types: list[str] = field(default_factory=list)
    # names whose declaration could not be read -> (Unsupported construct for their users, why)
    unresolved: dict[str, tuple[str, str]] = field(default_factory=dict)
    uses: list[str] = field(default_factory=list)
    intrinsic: bool = False  # iso_fortran_env, iso_c_binding, omp_lib: built in, not from a file


@dataclass
class SourceFile:
    """What the front end made of one file."""

    path: str
    form: str  # 'free' | 'fixed'
    kernels: list[Kernel] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)  # main programs (not kernels)
    fixed_length: Optional[int] = 72  # where a fixed statement ends (-ffixed-line-length-N; None: none)
    errors: list[Diagnostic] = field(default_factory=list)  # parse errors etc.
    includes: list[str] = field(default_factory=list)
    preprocessed: bool = False
    # internal procedures of main programs ("program:name"); each is also a kernel (Kernel.host)
    internal_procedures: list[str] = field(default_factory=list)
    # main programs as Kernels of kind 'program' (no arguments), analysed like kernels; not
    # in ``kernels`` (a program is not a routine to port and prove with random inputs; it can
    # become a hybrid port proven by running it)
    program_units: list[Kernel] = field(default_factory=list)
    # per module of the file: its entities by name -> 'variable' | 'parameter' | 'procedure'
    # | 'generic:<specific>,<specific>...' (what other files of the program can USE)
    module_entities: dict[str, dict[str, str]] = field(default_factory=dict)
    interfaces: dict[str, ModuleInterface] = field(default_factory=dict)  # of the modules defined here
    # modules USEd but found neither in the file nor among the modules given: name -> first line
    missing_modules: dict[str, int] = field(default_factory=dict)


# --------------------------------------------------------------------------- helpers


def children(stmt: Stmt) -> list[Stmt]:
    """Direct child statements of a statement (in order)."""
    if isinstance(stmt, (Do, DoWhile, Where)):
        out = list(stmt.body)
        if isinstance(stmt, Where):
            out += stmt.elsewhere
        return out
    if isinstance(stmt, If):
        out: list[Stmt] = []
        for _, body in stmt.branches:
            out += body
        return out + list(stmt.else_body)
    if isinstance(stmt, SelectCase):
        out = []
        for c in stmt.cases:
            out += c.body
        return out
    return []


def walk(body: list[Stmt]):
    """Pre-order walk over a statement list and everything nested in it."""
    for s in body:
        yield s
        yield from walk(children(s))


def stmt_exprs(s: Stmt) -> list[Expr]:
    """Expressions directly held by a statement (not those of nested statements)."""
    if isinstance(s, Assign):
        return [s.target, s.value]
    if isinstance(s, Do):
        return [x for x in (s.start, s.end, s.step) if x is not None]
    if isinstance(s, DoWhile):
        return [s.cond]
    if isinstance(s, If):
        return [c for c, _ in s.branches]
    if isinstance(s, ArithmeticIf):
        return [s.expr]
    if isinstance(s, SelectCase):
        out = [s.expr]
        for c in s.cases:
            out += c.values
        return out
    if isinstance(s, Where):
        return [s.mask]
    if isinstance(s, ComputedGoto):
        return [s.expr]
    if isinstance(s, CallStmt):
        return list(s.args)
    if isinstance(s, Stop):
        return [s.code] if s.code is not None else []
    return []


def expr_children(e: Expr) -> list[Expr]:
    if isinstance(e, ArrayRef):
        return list(e.subscripts)
    if isinstance(e, Slice):
        return [x for x in (e.lower, e.upper, e.step) if x is not None]
    if isinstance(e, BinOp):
        return [e.left, e.right]
    if isinstance(e, UnaryOp):
        return [e.operand]
    if isinstance(e, FuncCall):
        return list(e.args) + list(e.keywords.values())
    if isinstance(e, ArrayConstructor):
        return list(e.items)
    return []


def walk_expr(e: Expr):
    """Every node of ``e`` in pre-order. Iterative: a long operator chain is a left-deep
    tree, and nested generators would make each node cost its depth."""
    stack = [e]
    while stack:
        x = stack.pop()
        yield x
        ch = expr_children(x)
        if ch:
            stack.extend(reversed(ch))


def _power(a, b):
    if isinstance(a, int) and isinstance(b, int) and b < 0:
        if a == 0:
            raise ValueError("zero to a negative power")
        return 1 // a ** -b if abs(a) == 1 else 0  # Fortran integer power: 1/(a**|b|) truncated
    try:
        return a ** b
    except ZeroDivisionError:
        raise ValueError("zero to a negative power") from None


_INT_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "**": _power,
}


def evaluate(e: Expr, env: dict[str, Any]) -> Any:
    """Evaluate an expression of literals, names in ``env`` and simple intrinsics.
    Used for bounds (``n+1``, ``lda*(n-1)+1``, ``max(1,n)``). Integer division truncates
    toward zero as in Fortran. Raises KeyError for an unknown name, ValueError otherwise
    (division by zero included)."""
    if isinstance(e, Literal):
        return e.value
    if isinstance(e, Name):
        return env[e.name]
    if isinstance(e, UnaryOp):
        v = evaluate(e.operand, env)
        if e.op == "-":
            return -v
        if e.op == "+":
            return v
        if e.op == "not":
            return not v
    if isinstance(e, BinOp):
        a, b = evaluate(e.left, env), evaluate(e.right, env)
        if e.op in _INT_OPS:
            return _INT_OPS[e.op](a, b)
        if e.op == "/":
            if b == 0:
                raise ValueError(f"division by zero in {e!r}")
            if isinstance(a, int) and isinstance(b, int):
                q = abs(a) // abs(b)
                return q if (a >= 0) == (b >= 0) else -q
            return a / b
        cmp = {"==": a == b, "/=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}
        if e.op in cmp:
            return cmp[e.op]
        if e.op == "and":
            return a and b
        if e.op == "or":
            return a or b
    if isinstance(e, FuncCall) and e.intrinsic:
        args = [evaluate(a, env) for a in e.args]
        fns = {
            "max": max, "min": min, "abs": abs, "int": int, "nint": _nint,
            "mod": _mod,
        }
        if e.name in fns:
            return fns[e.name](*args)
    raise ValueError(f"cannot evaluate expression {e!r}")


def _nint(x) -> int:
    """Fortran NINT: the nearest integer, halves away from zero (nint(2.5) = 3,
    nint(-2.5) = -3); Python's round() rounds halves to even."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def _mod(a, b):
    """Fortran MOD: a - int(a/b)*b, the sign of a; integer arithmetic kept exact."""
    if b == 0:
        raise ValueError("MOD with a zero divisor")
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return a - (q if (a >= 0) == (b >= 0) else -q) * b
    return math.fmod(a, b)


def to_dict(obj: Any) -> Any:
    """JSON-friendly view of any IR object (for reports, the LLM context, caching)."""
    if hasattr(obj, "__dataclass_fields__"):
        d = {"_type": type(obj).__name__}
        for k in obj.__dataclass_fields__:
            d[k] = to_dict(getattr(obj, k))
        return d
    if isinstance(obj, (list, tuple)):
        return [to_dict(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, complex):
        return [obj.real, obj.imag]
    return obj
