"""The program model: every file of every tree on the command line read as one program.

``build_program(sources, ...)`` parses each file (through the per-file parse cache of
``parse.py``, in module-dependency order) and links the results into one symbol table and
one call graph:

* routines (subroutines, functions, module procedures) with their file and lines;
* modules: the file defining each, and the modules each file uses;
* COMMON blocks and the routines that touch each; the include files of each file;
* the compile settings of each file (include dirs, defines, Fortran flags);
* for every call, where the callee is: the same file, a used module, another file of the
  tree, a Fortran intrinsic, or nowhere (``external``: a library such as BLAS or MPI, or a
  C routine), and the callers of every routine.

Then the interprocedural facts that need the whole tree (``interproc.py``): argument
intents through callees of other files, and extents of assumed-size dummies taken from the
call sites or from the configuration.

Every stage asks this one object (the translator: "where is this callee, what is its IR";
the harness: "which files define what this object needs, in which order do modules
compile"; the reports: callers, callees, externals). It is plain data: the pipeline saves
it once per run (:meth:`Program.save`, ``<out>/program/program.pickle``) and each worker
process loads it once (:func:`load_program`).
"""
from __future__ import annotations

import copy
import os
import pickle
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional

from . import ftypes, ir
from .common_use import names_used

# Fortran intrinsic procedures (and GNU extensions from libgfortran) the front end's typing
# table (``ftypes``) does not hold: calls to them are neither tree routines nor externals
INTRINSIC_NAMES = frozenset(ftypes.INTRINSIC_SUBROUTINES) | frozenset("""
cpu_time system_clock date_and_time random_number random_seed get_command get_command_argument
get_environment_variable execute_command_line move_alloc mvbits c_f_pointer c_f_procpointer
command_argument_count storage_size new_line is_iostat_end is_iostat_eor c_loc c_funloc c_sizeof
c_associated null transfer bit_size extends_type_of same_type_as num_images this_image
atomic_define atomic_ref co_broadcast co_max co_min co_reduce co_sum
abort exit flush sleep getarg iargc getenv getlog getcwd chdir system srand rand irand second etime
dtime fdate idate itime ltime gmtime ctime time time8 secnds perror signal alarm fseek ftell fstat
stat lstat chmod rename unlink link symlnk hostnm umask kill gerror getpid getuid getgid lnblnk
sizeof loc and or xor lshift rshift
""".split())
INTRINSIC_MODULES = frozenset({"iso_fortran_env", "iso_c_binding", "ieee_arithmetic", "ieee_exceptions",
                               "ieee_features", "omp_lib", "omp_lib_kinds", "openacc"})
_BLAS = re.compile(r"^[sdcz](gemm|gemv|symm|symv|hemm|hemv|syrk|herk|syr2k|her2k|trmm|trmv|trsm|trsv|ger[uc]?|"
                   r"syr2?|her2?|axpy|axpby|dot[uc]?|scal|copy|swap|nrm2|asum|rotg?|rotmg?|gbmv|sbmv|spmv|"
                   r"tbmv|tbsv|tpmv|tpsv|getrf|getrs|getri|gesv|potrf|potrs|posv|syev|syevd|geev|gesvd|"
                   r"geqrf|orgqr|ormqr|sygv)$|^i[sdcz]amax$|^lsame$|^xerbla$")


def library_of(name: str) -> str:
    """A guess at the library an external routine comes from (for messages); '' if none."""
    n = name.lower()
    if n.startswith("mpi_") or n.startswith("pmpi_"):
        return "MPI"
    if n.startswith("omp_"):
        return "OpenMP runtime"
    if _BLAS.match(n):
        return "BLAS/LAPACK"
    return ""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class FileSettings:
    """How one file is preprocessed and compiled (the same for the parse and the harness)."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()  # sorted (name, value)
    fflags: tuple[str, ...] = ()  # extra Fortran flags (e.g. -fdefault-real-8)

    @property
    def defines_dict(self) -> dict[str, str]:
        return dict(self.defines)

    @classmethod
    def of(cls, include_dirs=(), defines=None, fflags=()) -> "FileSettings":
        return cls(tuple(str(d) for d in include_dirs), tuple(sorted((str(k), "" if v is None else str(v))
                                                                      for k, v in (defines or {}).items())),
                   tuple(fflags))


@dataclass
class Routine:
    """One subroutine, function or module procedure of the tree."""

    name: str
    kind: str  # 'subroutine' | 'function'
    file: str  # absolute path
    line: int
    line_end: int
    module: Optional[str] = None  # the module that contains it (module procedures)
    calls: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)
    commons: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def title(self) -> str:
        return f"{self.module}::{self.name}" if self.module else self.name

    @property
    def symbol(self) -> str:
        """gfortran's linker symbol (default mangling)."""
        return f"__{self.module}_MOD_{self.name}" if self.module else f"{self.name}_"


@dataclass
class Callee:
    """Where one name a routine calls is defined. ``where``: 'module' (a procedure of the
    routine's own or a used module), 'file' (the same file), 'tree' (another file),
    'ambiguous' (several files define it: ``routine`` is the one used, ``alternatives``
    the others), 'generic' (a generic interface of ``module``; ``alternatives`` its
    specific procedures), 'module-variable' (an array of ``module`` the
    file's front end read as a call), 'intrinsic', 'external' (no file defines it;
    ``library`` a guess at the library)."""

    name: str
    where: str
    routine: Optional[Routine] = None
    alternatives: list[Routine] = field(default_factory=list)
    library: str = ""
    module: str = ""  # the module of a generic interface or module variable

    @property
    def resolved(self) -> bool:
        return self.routine is not None

    def describe(self) -> str:
        if self.routine is not None:
            extra = f"; also defined in {', '.join(r.where for r in self.alternatives)}" if self.alternatives else ""
            return f"{self.name} ({self.routine.where}{extra})"
        if self.where == "intrinsic":
            return f"{self.name} [intrinsic]"
        if self.where == "generic":
            return f"{self.name} [generic interface of module {self.module}]"
        if self.where == "module-variable":
            return f"{self.name} [variable of module {self.module}]"
        return f"{self.name} [external{': ' + self.library if self.library else ''}]"


@dataclass
class FileUnits:
    """What a cheap scan of one file's text finds: modules defined and used."""

    modules: list[str] = field(default_factory=list)
    uses: list[str] = field(default_factory=list)


def unknown_where(c: Callee) -> str:
    """Why a call is not to a routine of the tree, for messages."""
    if c.where == "generic":
        return f"'{c.name}' is a generic interface of module {c.module}"
    if c.where == "module-variable":
        return f"'{c.name}' is an array of module {c.module}, read as a call"
    if c.where == "intrinsic":
        return f"'{c.name}' is an intrinsic procedure"
    return f"'{c.name}' is not defined in any file of the tree (external{': ' + c.library if c.library else ''})"


# --------------------------------------------------------------------------- scanning

_MODULE_RE = re.compile(r"^\s*module\s+(\w+)\s*(?:!.*)?$", re.IGNORECASE)
_USE_RE = re.compile(r"^\s*use\b\s*(?:,\s*(?:intrinsic|non_intrinsic)\s*)?(?:::)?\s*(\w+)", re.IGNORECASE)
_NOT_MODULE = ("procedure", "function", "subroutine")


def scan_units(text: str, form: str) -> FileUnits:
    """Modules a file defines and uses, from its text (comments skipped; every ``use``
    counts, also one a preprocessor condition would drop: it only orders compilation)."""
    out = FileUnits()
    for line in text.split("\n"):
        if form == "fixed":
            if not line or line[0] in "cC*!dD#":
                continue
            stmt = line[6:72] if len(line) > 6 and line[5] in " 0" else ""
        else:
            stmt = line
        stmt = stmt.split("!")[0]
        for part in stmt.split(";"):
            m = _MODULE_RE.match(part)
            if m and m.group(1).lower() not in _NOT_MODULE:
                if m.group(1).lower() not in out.modules:
                    out.modules.append(m.group(1).lower())
                continue
            m = _USE_RE.match(part)
            if m:
                name = m.group(1).lower()
                if name not in out.uses:
                    out.uses.append(name)
    out.uses = [u for u in out.uses if u not in out.modules]
    return out


def _scan_file(path: str) -> FileUnits:
    from .reader import form_of
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return FileUnits()
    return scan_units(text, form_of(path, text))


# --------------------------------------------------------------------------- the program


def norm(path) -> str:
    return os.path.abspath(str(path))


class Program:
    """The symbol table and call graph of all files of a run (see the module docstring)."""

    def __init__(self):
        self.order: list[str] = []  # absolute paths, in command-line order
        self.given: dict[str, str] = {}  # absolute path -> path as given (messages, Kernel.file)
        self.files: dict[str, ir.SourceFile] = {}
        self.settings: dict[str, FileSettings] = {}
        self.units: dict[str, FileUnits] = {}
        self.routines: dict[str, list[Routine]] = {}  # name -> definitions, command-line order
        self.modules: dict[str, list[str]] = {}  # module -> defining files
        self.commons: dict[str, list[tuple[str, str]]] = {}  # block ('' blank) -> [(file, routine)]
        self.config: dict[str, dict] = {}  # the configuration's `routines:` (per routine, per argument)
        self.objects_dir: Optional[str] = None  # where the harness caches the tree's objects
        self.path: Optional[str] = None  # where it was saved (port.json points there)
        self.notes: list[ir.Diagnostic] = []  # program-level findings (extents, ambiguous names)
        # C sources of the tree (linked where Fortran calls them, never ported) and the
        # symbols each defines (harness.linking.c_symbols, filled when a run is planned)
        self.c_sources: list[str] = []
        self.c_defined: dict[str, str] = {}
        self.c_needs: dict[str, list[str]] = {}  # C file -> the symbols its object leaves undefined
        self._kernels: dict[tuple[str, str], ir.Kernel] = {}
        self._routine: dict[tuple[str, str], Routine] = {}
        self._callees: dict[tuple[str, str], list[Callee]] = {}
        self._callers: dict[tuple[str, str], list[Routine]] = {}

    # ------------------------------------------------------------------ building

    def add_file(self, path: str, sf: ir.SourceFile, settings: FileSettings, units: FileUnits) -> None:
        """One parsed file. ``sf`` is the front end's SourceFile; a stand-in front end (a
        ``stages_factory`` of tests or other harnesses) may give any object with ``kernels``
        (each with ``name``, ``line_start``, ``line_end``) and ``errors``: what it lacks is
        taken as empty (no calls, no modules)."""
        key = norm(path)
        if key in self.files:
            return
        self.order.append(key)
        self.given[key] = str(path)
        self.files[key] = sf
        self.settings[key] = settings
        self.units[key] = FileUnits(list(dict.fromkeys(units.modules + list(getattr(sf, "modules", [])))),
                                    list(units.uses))
        for m in self.units[key].modules:
            self.modules.setdefault(m, []).append(key)
        for k in sf.kernels:
            r = Routine(k.name, getattr(k, "kind", "subroutine"), key, k.line_start, k.line_end,
                        getattr(k, "module", None), list(getattr(k, "calls", [])), list(getattr(k, "uses", [])),
                        [c.name for c in getattr(k, "commons", [])])
            if (key, k.name) in self._routine:
                continue  # the same name twice in one file (internal procedures of two hosts)
            self._routine[(key, k.name)] = r
            self._kernels[(key, k.name)] = k
            self.routines.setdefault(k.name, []).append(r)
            for c in getattr(k, "commons", []):
                self.commons.setdefault(c.name, []).append((key, k.name))

    def link(self) -> None:
        """Resolve every call of every routine; fill the callers."""
        self._callees.clear()
        self._callers.clear()
        for key, r in self._routine.items():
            out = [self._resolve(r, name) for name in r.calls]
            self._callees[key] = out
            for c in out:
                if c.routine is not None:
                    lst = self._callers.setdefault((c.routine.file, c.routine.name), [])
                    if r not in lst:
                        lst.append(r)

    def visible_modules(self, r: Routine) -> list[str]:
        """The routine's own module and those it uses, with what their files use in turn."""
        out: list[str] = []
        todo = ([r.module] if r.module else []) + list(r.uses)
        while todo:
            m = todo.pop(0)
            if m in out:
                continue
            out.append(m)
            for f in self.modules.get(m, [])[:1]:
                todo += [u for u in self.units[f].uses if u not in out]
        return out

    def module_entities(self, module: str) -> dict[str, str]:
        """Names a module of the tree declares (``ir.SourceFile.module_entities``)."""
        for f in self.modules.get(module, [])[:1]:
            return getattr(self.files[f], "module_entities", {}).get(module, {})
        return {}

    def resolve_from(self, k: ir.Kernel, name: str) -> Callee:
        """Where ``name`` called by the program unit ``k`` is defined: as :meth:`callee`
        for a routine of the tree, resolved now for one that is not (a main program)."""
        got = self.callee(k, name)
        if got is not None:
            return got
        r = Routine(k.name, getattr(k, "kind", "program"), norm(k.file), k.line_start, k.line_end,
                    getattr(k, "module", None), list(getattr(k, "calls", [])), list(getattr(k, "uses", [])))
        return self._resolve(r, name)

    def _resolve(self, r: Routine, name: str) -> Callee:
        defs = self.routines.get(name, [])
        mods = self.visible_modules(r)
        for m in mods:
            hit = [d for d in defs if d.module == m]
            if hit:
                return Callee(name, "module", hit[0])
            kind = self.module_entities(m).get(name, "")
            if kind.startswith("generic:"):
                specific = [d for n in kind[len("generic:"):].split(",") if n for d in self.routines.get(n, [])
                            if d.module == m or d.module is None]
                return Callee(name, "generic", None, specific, module=m)
            if kind in ("variable", "parameter"):
                # the file's front end took an array of a module of another file for a call
                return Callee(name, "module-variable", None, module=m)
        same = [d for d in defs if d.file == r.file and d.module is None]
        if same:
            return Callee(name, "file", same[0])
        free = [d for d in defs if d.module is None]
        if free:
            if len(free) > 1:
                near = [d for d in free if os.path.dirname(d.file) == os.path.dirname(r.file)]
                if len(near) == 1:
                    return Callee(name, "tree", near[0])
                pick = (near or free)[0]
                return Callee(name, "ambiguous", pick, [d for d in free if d is not pick])
            return Callee(name, "tree", free[0])
        if name in INTRINSIC_NAMES:
            return Callee(name, "intrinsic")
        return Callee(name, "external", library=library_of(name))

    # ------------------------------------------------------------------ files and routines

    def has_file(self, path) -> bool:
        return norm(path) in self.files

    def file(self, path) -> ir.SourceFile:
        key = norm(path)
        if key not in self.files:
            from ..errors import UserError
            raise UserError(f"{path}: not a file of this program (files: {len(self.order)}, e.g. "
                            f"{', '.join(self.given[k] for k in self.order[:3])})")
        return self.files[key]

    def kernel(self, path, name: str) -> ir.Kernel:
        k = self._kernels.get((norm(path), name))
        if k is None:
            from ..errors import UserError
            sf = self.file(path)
            raise UserError(f"{path}: kernel '{name}' not found (the file has: "
                            f"{', '.join(x.name for x in sf.kernels) or 'no kernels'})")
        return k

    def load(self, path, name: str) -> tuple[ir.Kernel, ir.SourceFile]:
        """A copy of the kernel (stages may change it) and its file's IR."""
        from .limits import ensure_recursion_limit
        ensure_recursion_limit()  # deep expression trees (long sums) copy recursively
        return copy.deepcopy(self.kernel(path, name)), self.file(path)

    def routine(self, path, name: str) -> Optional[Routine]:
        return self._routine.get((norm(path), name))

    def routine_of(self, k: ir.Kernel) -> Optional[Routine]:
        return self.routine(k.file, k.name)

    def kernel_of(self, r: Routine) -> ir.Kernel:
        return self._kernels[(r.file, r.name)]

    def source_of(self, k: ir.Kernel) -> Optional[ir.SourceFile]:
        return self.files.get(norm(k.file))

    def all_routines(self) -> list[Routine]:
        """Every routine, in command-line order of the files and source order within each."""
        return list(self._routine.values())  # filled file by file, in that order

    # ------------------------------------------------------------------ call graph

    def callees(self, k) -> list[Callee]:
        """Where each name the routine (a Kernel or Routine) calls is defined, in call order."""
        return list(self._callees.get((norm(k.file), k.name), []))

    def callee(self, k, name: str) -> Optional[Callee]:
        for c in self._callees.get((norm(k.file), k.name), []):
            if c.name == name:
                return c
        return None

    def callers(self, k) -> list[Routine]:
        return list(self._callers.get((norm(k.file), k.name), []))

    def callable_from(self, k: ir.Kernel) -> dict[str, ir.Kernel]:
        """The IR of every routine of the tree the kernel's calls resolve to, by name (what
        the translator's symbol table holds as ``functions``)."""
        out: dict[str, ir.Kernel] = {}
        for c in self.callees(k):
            if c.routine is not None:
                out[c.name] = self.kernel_of(c.routine)
        return out

    def externals(self) -> dict[str, list[Routine]]:
        """Names no file of the tree defines (and no intrinsic), with their callers."""
        out: dict[str, list[Routine]] = {}
        for key, cs in self._callees.items():
            for c in cs:
                if c.where == "external":
                    out.setdefault(c.name, []).append(self._routine[key])
        return dict(sorted(out.items()))

    def ambiguous(self) -> dict[str, list[Routine]]:
        return {n: defs for n, defs in sorted(self.routines.items())
                if len([d for d in defs if d.module is None]) > 1}

    def reaches(self, k, *, limit: int = 10_000) -> list[Callee]:
        """Every callee reached from the routine, transitively (each name once)."""
        seen: dict[str, Callee] = {}
        todo = [self.routine(k.file, k.name) or k]
        steps = 0
        while todo and steps < limit:
            steps += 1
            r = todo.pop()
            for c in self.callees(r):
                key = f"{c.routine.file}:{c.name}" if c.routine is not None else c.name
                if key in seen:
                    continue
                seen[key] = c
                if c.routine is not None:
                    todo.append(c.routine)
        return list(seen.values())

    def impurities(self, k, _seen: Optional[set] = None, *, module_reads: bool = False) -> list[ir.Diagnostic]:
        """Why the routine is not a function of its arguments alone (empty: it is): I/O and
        other constructs the IR cannot model, STOP, state kept between calls (SAVE), COMMON
        blocks and module variables, and the same in every routine it calls, transitively;
        a callee no file defines counts too. What a device function of a callee needs.
        ``module_reads``: module variables it only reads are no impurity (an outlined nest
        passes them: ``module_reads.py``); writing one still is."""
        seen = _seen if _seen is not None else set()
        key = (norm(k.file), k.name)
        if key in seen:
            return []
        seen.add(key)
        kern = self._kernels.get(key)
        if not isinstance(kern, ir.Kernel):
            return []
        from .error_exits import without_error_exits
        whole = kern
        kern = without_error_exits(kern, self.resolver())  # a branch ending the program: no impurity
        out = [ir.Diagnostic(u.construct, u.reason, u.line, kern.file) for u in kern.unsupported]
        out += [ir.Diagnostic("stop", "STOP ends the program", s.line, kern.file)
                for s in ir.walk(kern.body) if isinstance(s, ir.Stop)]
        out += [ir.Diagnostic("save-variable", f"local '{n}' keeps its value between calls", v.line, kern.file)
                for n, v in kern.locals.items() if v.save and v.parameter is None]
        # a block only declared (an include of every COMMON of the code, as Nekbone's SIZE)
        # is no state the routine touches: only blocks whose members it names count
        named = names_used(kern)
        out += [ir.Diagnostic("common-block", f"COMMON /{c.name}/ is shared state", c.line, kern.file)
                for c in kern.commons if set(c.variables) & named]
        if module_reads:
            from .module_reads import own_reads
            out += own_reads(kern, self.resolver()).problems
        else:
            out += [ir.Diagnostic("module-variable", f"module variable '{n}' of {v.module} is shared state", v.line,
                                  kern.file) for n, v in kern.module_vars.items()]
        for c in self.callees(kern):
            if c.name in whole.calls and c.name not in kern.calls:  # only called on an error exit
                continue
            if c.routine is not None:
                inner = self.impurities(c.routine, seen, module_reads=module_reads)
                if inner:
                    out.append(ir.Diagnostic("impure-call", f"calls {c.name} ({c.routine.where}): {inner[0].message}",
                                             kern.line_start, kern.file))
            elif c.where not in ("intrinsic",):
                out.append(ir.Diagnostic("call-to-unknown", unknown_where(c), kern.line_start, kern.file))
        return out

    def resolver(self):
        """(caller, name) -> the IR of the routine of the tree the call resolves to, or None."""
        def resolve(caller, name: str):
            c = self.callee(caller, name)
            return self.kernel_of(c.routine) if c is not None and c.routine is not None else None
        return resolve

    def call_sites(self, k) -> list[tuple[ir.Kernel, list[ir.Expr], int]]:
        """(caller, actual arguments, line) of every call of the routine in the tree."""
        out = []
        for r in self.callers(k):
            caller = self.kernel_of(r)
            for s in ir.walk(caller.body):
                if isinstance(s, ir.CallStmt) and s.name == k.name:
                    out.append((caller, list(s.args), s.line))
                for e in ir.stmt_exprs(s):
                    for x in ir.walk_expr(e):
                        if isinstance(x, ir.FuncCall) and not x.intrinsic and x.name == k.name:
                            out.append((caller, list(x.args), s.line))
        return out

    # ------------------------------------------------------------------ modules and objects

    def module_files(self, path) -> list[str]:
        """Files defining the modules the file uses (directly; first definition of each)."""
        key = norm(path)
        out = []
        for m in self.units.get(key, FileUnits()).uses:
            for f in self.modules.get(m, [])[:1]:
                if f != key and f not in out:
                    out.append(f)
        return out

    def external_modules(self, path=None) -> list[str]:
        """Modules used but defined by no file of the tree (nor intrinsic)."""
        keys = [norm(path)] if path is not None else self.order
        out = []
        for k in keys:
            for m in self.units.get(k, FileUnits()).uses:
                if m not in self.modules and m not in INTRINSIC_MODULES and m not in out:
                    out.append(m)
        return out

    def compile_order(self, paths: Iterable[str]) -> list[str]:
        """The given files and the files defining the modules they use (transitively),
        ordered so that every module is compiled before its users."""
        order: list[str] = []
        state: dict[str, int] = {}

        def visit(f: str) -> None:
            if state.get(f) == 2:
                return
            if state.get(f) == 1:  # a cycle (two files each defining what the other uses)
                return
            state[f] = 1
            for g in self.module_files(f):
                visit(g)
            state[f] = 2
            order.append(f)

        for p in paths:
            visit(norm(p))
        return order

    def file_for_symbol(self, symbol: str) -> Optional[str]:
        """The file whose object defines a gfortran symbol (a routine ``name_``, a module
        entity ``__mod_MOD_x``; a C source of the tree defining it), or None when no file of
        the tree does."""
        m = re.match(r"^__(\w+?)_MOD_(\w+)$", symbol)
        if m:
            files = self.modules.get(m.group(1), [])
            return files[0] if files else None
        if symbol.endswith("_") and not symbol.startswith("_"):
            name = symbol[:-1]
            for r in self.routines.get(name, []):
                if r.module is None:
                    return r.file
        return (getattr(self, "c_defined", None) or {}).get(symbol)  # a C source of the tree

    def c_closure(self, c_files: list[str]) -> list[str]:
        """``c_files`` and, transitively, the C sources of the tree defining what their
        objects leave undefined (gslib's gs.c needs gs_local.c), in the order found."""
        out = list(dict.fromkeys(c_files))
        defined = getattr(self, "c_defined", None) or {}
        needs = getattr(self, "c_needs", None) or {}
        i = 0
        while i < len(out):
            for sym in needs.get(out[i], []):
                g = defined.get(sym)
                if g is not None and g not in out:
                    out.append(g)
            i += 1
        return out

    def c_file_of(self, name: str) -> Optional[str]:
        """The C source of the tree defining the routine ``name`` as gfortran calls it
        (``name_``), or None."""
        return (getattr(self, "c_defined", None) or {}).get(f"{name.lower()}_")

    def settings_of(self, path) -> FileSettings:
        return self.settings.get(norm(path), FileSettings())

    # ------------------------------------------------------------------ configuration

    def routine_config(self, name: str) -> dict:
        """The configuration's entry for a routine (``routines.<name>``), {} if none."""
        return dict(self.config.get(name, {}) or {})

    # ------------------------------------------------------------------ summaries

    def callee_json(self, c: Callee) -> dict:
        d = {"name": c.name, "where": c.where}
        if c.routine is not None:
            d["file"] = self.given.get(c.routine.file, c.routine.file)
            d["line"] = c.routine.line
            if c.routine.module:
                d["module"] = c.routine.module
        if c.alternatives:
            d["alternatives"] = [f"{self.given.get(r.file, r.file)}:{r.line}" for r in c.alternatives]
        if c.library:
            d["library"] = c.library
        c_file = self.c_file_of(c.name) if c.routine is None else None
        if c_file:  # external to the Fortran, defined by a C source of the tree (linked, not ported)
            d["c_file"] = self.given.get(c_file, c_file)
        if c.module and c.routine is None:
            d["module"] = c.module
        return d

    def routine_json(self, k) -> dict:
        """Callers, callees and the externals reached (transitively) of one routine."""
        return {
            "pure": not self.impurities(k),
            "callees": [self.callee_json(c) for c in self.callees(k)],
            "callers": [{"name": r.name, "file": self.given.get(r.file, r.file), "line": r.line}
                        for r in self.callers(k)],
            "externals": sorted({c.name for c in self.reaches(k) if c.where == "external"}),
        }

    def summary(self, rel: Optional[Callable[[str], str]] = None) -> dict:
        """The whole program for reports: counts, modules, externals with their callers,
        names defined more than once."""
        rel = rel or (lambda p: self.given.get(p, p))
        return {
            "files": len(self.order),
            "routines": sum(len(v) for v in self.routines.values()),
            "modules": {m: rel(fs[0]) for m, fs in sorted(self.modules.items())},
            "external_modules": self.external_modules(),
            "externals": [{"name": n, "library": library_of(n),
                           "callers": sorted({f"{rel(r.file)}:{r.name}" for r in rs}),
                           **({"c_file": rel(cf)} if (cf := self.c_file_of(n)) else {})}
                          for n, rs in self.externals().items()],
            "c_sources": [rel(f) for f in getattr(self, "c_sources", [])],
            "ambiguous": [{"name": n, "files": [f"{rel(r.file)}:{r.line}" for r in rs if r.module is None]}
                          for n, rs in self.ambiguous().items()],
            "notes": [{"code": d.code, "message": d.message, "file": rel(norm(d.file)) if d.file else "",
                       "line": d.line} for d in self.notes],
        }

    # ------------------------------------------------------------------ persistence

    def save(self, path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        self.path = str(p.resolve())
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(self, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, p)
        return p


_LOADED: dict[str, tuple[float, Program]] = {}
_LOAD_LOCK = threading.Lock()


def load_program(path) -> Program:
    """The program saved at ``path`` (loaded once per process, again if the file changed)."""
    from .limits import ensure_recursion_limit
    ensure_recursion_limit()  # the pickle holds the IR's deep expression trees
    key = norm(path)
    mtime = os.path.getmtime(key)
    with _LOAD_LOCK:
        hit = _LOADED.get(key)
        if hit is not None and hit[0] == mtime:
            return hit[1]
        with open(key, "rb") as fh:
            prog = pickle.load(fh)
        if not isinstance(prog, Program):
            from ..errors import UserError
            raise UserError(f"{path}: not a program model written by port-fortran; delete it and run again")
        _LOADED[key] = (mtime, prog)
        return prog
