"""Hybrid ports: the routine stays Fortran, its parallel loop nests become Kokkos kernels.

When a routine cannot move to C++ as a whole (ENTRY, EQUIVALENCE, SAVE state, I/O, calls
to routines the rules cannot see, GOTOs out of loops) or is a main program, an expert keeps
it in Fortran and moves only the loop nests that matter. :func:`hybrid_port` does that:

1. every outermost loop nest the planner would make a parallel kernel
   (``Planner.parallel_kind``; loops that are not parallel are searched for such nests);
2. each becomes a *synthetic kernel* (:func:`outline`): an ``ir.Kernel`` whose body is a
   copy of the nest and whose arguments are the variables it touches -- arrays (dummies
   keep their declared bounds when those depend only on PARAMETERs, dummies the routine
   never changes and integer module scalars nothing it runs changes; any other array gets
   its bounds as extra integer arguments the caller evaluates with LBOUND/UBOUND), scalars
   it reads (intent in), scalars it writes that are read later or before it assigns them
   (inout; liveness from ``fortran/dataflow.py``), and the module variables the routines it
   calls read (``hybrid_modvars``); its private scalars and loop variables stay local to
   it. The rules translator (``engine.translate_parts``) ports it like any kernel;
3. the routine's source is copied with each outlined nest's lines replaced by a CALL of the
   kernel's ``extern "C"`` entry through a generated interface module (``fortran_text``).

A nest stays Fortran, with a coded reason and its line, when it touches two names of one
storage class (EQUIVALENCE, or COMMON storage an EQUIVALENCE reaches), when a jump from
outside lands inside it, when its text cannot be cut out of the file (INCLUDEd or macro
text, preprocessor lines inside, an OpenMP parallel region around it), when the translator
refuses it, or when it would not run in parallel once outlined.

Pure: IR and text in, a :class:`records.Port` out (files as strings).
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from ..fortran import ir
from ..fortran.analysis import analyse_kernel
from ..fortran.dataflow import FlowGraph, exposed_reads
from ..fortran.dependence import kernel_context
from ..fortran.privatize import nest_only_array
from ..records import Port, TranslateOptions, TranslationRefused
from . import fortran_text
from . import render
from .access import arrays_written, names_changed, names_in, scalars_written
from .engine import KernelParts, translate_parts
from .hybrid_modvars import nest_reads, use_lines
from .hybrid_kept import SMALL_NEST, Kept, elements_passed_out, find_nests, kept_statements, nest_trips as _nest_trips, serialised_regions
from .plan import Planner
from .symbols import Symbol, build_symbols

#: patterns that mean a kernel runs in parallel (a 'serial' single-iteration kernel does not)
PARALLEL_PATTERNS = {"parallel_for", "mdrange", "reduce", "scan", "atomic", "team"}


@dataclass
class Outlined:
    """One loop nest that runs as a Kokkos kernel."""

    entry: str  # extern "C" entry the Fortran calls, '<k>_l<line>_kokkos'
    line: int  # the DO statement
    end_line: int
    patterns: list[str]
    arguments: list[str]  # actual arguments of the CALL, as written in the Fortran
    routine: str = ""  # the internal procedure it lies in ('' : the routine itself)


@dataclass
class HybridInfo:
    """What a hybrid port is: written to ``hybrid.json`` in the port directory and carried
    in ``Port.hybrid`` (reports, ``list``)."""

    source: str  # file name of the generated Fortran in the port directory
    original: str  # path of the user's file it was made from
    routine: str
    form: str
    nests: int  # loop nests of the original (parallel ones and serial leaves)
    outlined: list[Outlined] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)
    why: list[str] = field(default_factory=list)  # why not a full port (the rules' refusal), when known
    edits: list[dict] = field(default_factory=list)  # the text edits, for tools that merge several routines
    include_dirs_first: list[str] = field(default_factory=list)  # -I the copy needs (the original's directory)
    header: str = ""  # the routine's text is an #included header: its edited copy's name, beside the copy
    # module variables the nests pass to the routines they call (hybrid_modvars): the
    # harness sets those the routine does not use itself too (Kernel.callee_module_reads)
    module_reads: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


class Keep(Exception):
    """A nest that stays Fortran."""

    def __init__(self, code: str, message: str, line: int):
        super().__init__(message)
        self.kept = Kept(code, line, message)


# ------------------------------------------------------------------ finding the nests


def _planner(kernel: ir.Kernel, source: Optional[ir.SourceFile], options: TranslateOptions,
             program=None) -> Planner:
    tab = build_symbols(kernel, source, program)
    # module variables: outlined, a nest takes them as arguments like the routine's own
    # (a sum into flux_out(ivar) of a module is a reduction as into a dummy's element)
    for name, v in getattr(kernel, "module_vars", {}).items():
        if name not in tab.symbols:
            tab.symbols[name] = Symbol(name, v.ftype, list(v.dims), "param" if v.parameter is not None else "module",
                                       value=v.parameter, line=v.line)
    out_args, pure = {}, set()
    for fn in tab.functions.values():
        out_args[fn.name] = {i for i, a in enumerate(fn.args) if a.intent != "in"}
        if fn.kind == "function" and all(a.intent == "in" and not a.dims for a in fn.args) \
                and not fn.commons and not fn.module_vars and not fn.unsupported:
            pure.add(fn.name)
    planner = Planner(kernel, tab, options, out_args, pure)
    planner.element_reductions = True
    return planner


# ------------------------------------------------------------------ outlining one nest


def _variable(kernel: ir.Kernel, name: str) -> Optional[ir.Variable]:
    for a in kernel.args:
        if a.name == name:
            return a
    if kernel.result is not None and kernel.result.name == name:
        return kernel.result
    return kernel.locals.get(name) or kernel.module_vars.get(name) or kernel.host_vars.get(name)


def _nest_names(stmts: list[ir.Stmt]) -> list[str]:
    """Variables a statement list mentions, in order of first appearance."""
    seen: dict[str, None] = {}
    for s in ir.walk(stmts):
        if isinstance(s, ir.Do):
            seen.setdefault(s.var)
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, (ir.Name, ir.ArrayRef)):
                    seen.setdefault(x.name)
    return list(seen)


def _storage_classes(kernel: ir.Kernel) -> list[tuple[set[str], int]]:
    """Names that share storage, with the EQUIVALENCE line: each EQUIVALENCE class, grown
    by every member of a COMMON block one of its names belongs to."""
    line = next((u.line for u in kernel.unsupported if u.construct == "equivalence"), kernel.line_start)
    out = []
    for cls in kernel.equivalences:
        names = set(cls)
        for b in kernel.commons:
            if names & set(b.variables):
                names |= set(b.variables)
        out.append((names, line))
    return out


@dataclass
class _Outline:
    kernel: ir.Kernel
    actuals: list[str]
    uses: list[tuple[str, str, str]] = field(default_factory=list)  # module variables the copy must USE
    module_reads: list[str] = field(default_factory=list)  # module variables it passes its callees


def outline(kernel: ir.Kernel, do: ir.Do, flow: FlowGraph, name: str,
            callees: dict[str, ir.Kernel], program=None) -> _Outline:
    """The synthetic kernel of one nest and the actual arguments the Fortran passes it.
    Raises Keep when the nest must stay Fortran."""
    nest = copy.deepcopy(do)  # its calls pass the module variables their callees read (hybrid_modvars)
    taken = {n.lower() for n in _nest_names(kernel.body)} | {a.name for a in kernel.args} | set(kernel.locals) \
        | set(kernel.module_vars) | set(kernel.calls) | {kernel.name}

    def fresh(base: str) -> str:
        n, k = base, 1
        while n in taken:
            n, k = f"{base}_{k}", k + 1
        taken.add(n)
        return n

    resolve = program.resolver() if program is not None else (lambda _c, n: callees.get(n))
    passed = nest_reads(kernel, nest, resolve, fresh)
    if passed.why:
        raise Keep("module-variable", passed.why, do.line)

    def var(nm: str) -> Optional[ir.Variable]:
        return passed.variables.get(nm) or _variable(kernel, nm)

    names = _nest_names([nest])
    for cls, line in _storage_classes(kernel):
        both = [n for n in names if n in cls]
        if len(both) > 1:
            raise Keep("equivalence-aliasing", f"the loop nest touches {', '.join(both)}, which share storage "
                       f"(EQUIVALENCE, line {line}): one kernel argument cannot alias another", do.line)
    # scalars a callee may write through its dummies count as written (JACOBF(P, PD, ...))
    out_args = {n: {i for i, a in enumerate(k.args) if a.intent != "in"} for n, k in callees.items()}
    written = scalars_written([do], out_args)
    arrays_out = arrays_written([do]) | elements_passed_out([do], out_args)
    exposed = exposed_reads([do], outs=flow.outs)  # a callee's output arguments are not reads
    changed = names_changed(kernel.body)
    args: list[ir.Argument] = []
    actuals: list[str] = []
    locals_: dict[str, ir.Variable] = {}
    arg_names: set[str] = set()

    def add_arg(nm: str, v: ir.Variable, intent: str, dims: list[ir.Dim], actual: str):
        args.append(ir.Argument(nm, v.ftype, dims, line=v.line or do.line, position=len(args), intent=intent,
                                intent_declared=True))
        arg_names.add(nm)
        actuals.append(actual)

    steady: set[str] = set()  # integer module scalars nothing the routine runs changes
    if program is not None and kernel.module_vars:
        from ..fortran.argfacts import changed_module_scalars
        from ..fortran.effects import Calls
        steady = {n for n, v in kernel.module_vars.items() if not v.dims and v.parameter is None
                  and v.ftype.base == "integer"} - changed_module_scalars(kernel, Calls(program))

    def fixed(e: Optional[ir.Expr]) -> bool:
        """Does ``e`` name only PARAMETERs, integer dummies the routine never changes and
        integer module scalars nothing it runs changes (so that it has the same value at
        the nest as on entry)?"""
        for nm in (names_in(e) if e is not None else ()):
            w = var(nm)
            if w is None:
                return False
            if (w.parameter is not None and not isinstance(w, ir.Argument)) or nm in steady:
                continue
            if not isinstance(w, ir.Argument) or w.dims or w.ftype.base != "integer" or nm in changed or w.optional:
                return False
        return True

    def keep_dims(v: ir.Variable) -> bool:
        """Declared bounds are usable when they are fixed (explicit shape or assumed size)."""
        if v.allocatable or any(d.assumed_shape for d in v.dims):
            return False
        return all(fixed(d.lower) and fixed(d.upper) for d in v.dims)

    def assumed_size_upper(v: ir.Variable) -> Optional[ir.Expr]:
        """For an assumed-size dummy: the largest subscript of its last dimension the whole
        routine can touch (the front end's access bounds), when it is fixed; the outlined
        nest touches no more than that (its own induction variables start from values set
        outside it, which the nest alone cannot bound)."""
        if not isinstance(v, ir.Argument) or not v.dims or v.dims[-1].upper is not None:
            return None
        ab = v.access_bounds[len(v.dims) - 1] if len(v.access_bounds) >= len(v.dims) else None
        if ab is None or not fixed(ab[1]):
            return None
        return copy.deepcopy(ab[1])

    def note_dim_names(exprs):  # in the order the bounds name them (the kernel's arguments are reproducible)
        for e in exprs:
            for x in (ir.walk_expr(e) if e is not None else ()):
                if isinstance(x, (ir.Name, ir.ArrayRef)) and x.name not in dim_scalars:
                    dim_scalars.append(x.name)

    dim_scalars: list[str] = []
    for nm in names:
        v = var(nm)
        if v is None:
            raise Keep("unknown-name", f"'{nm}' in the loop nest has no declaration the tool can see", do.line)
        if isinstance(v, ir.Argument) and v.optional:
            raise Keep("optional-argument", f"the loop nest uses OPTIONAL argument '{nm}' (it may be absent)", do.line)
        if (v.parameter is not None and not isinstance(v, ir.Argument) and v is not kernel.result) \
                or nest_only_array(kernel, do, nm):
            locals_[nm] = copy.deepcopy(v)
            continue
        if v.dims:
            intent = "inout" if nm in arrays_out or nm in written else "in"
            last = assumed_size_upper(v)
            if keep_dims(v):
                dims = copy.deepcopy(v.dims)
                if last is not None:
                    dims[-1].upper = last
                add_arg(nm, v, intent, dims, nm)
                note_dim_names([e for d in dims for e in (d.lower, d.upper)])
                continue
            dims, bound_args = [], []
            for k, d in enumerate(v.dims, 1):
                lb = fresh(f"pf_lb{k}_{nm}")
                bound_args.append((lb, f"LBOUND({nm}, {k})"))
                if (d.upper is None or getattr(d, "extent_given", False)) and not d.assumed_shape and not v.allocatable:
                    # assumed size (also when the configuration or the call sites gave its
                    # extent: the source still declares '*', which UBOUND cannot ask): the
                    # routine's own bound when known, else '*' stays
                    up = last if d.upper is None else (copy.deepcopy(d.upper) if fixed(d.upper) else None)
                    dims.append(ir.Dim(ir.Name(lb, ftype=ir.INTEGER), up))
                    note_dim_names([up])
                    continue
                ub = fresh(f"pf_ub{k}_{nm}")
                bound_args.append((ub, f"UBOUND({nm}, {k})"))
                dims.append(ir.Dim(ir.Name(lb, ftype=ir.INTEGER), ir.Name(ub, ftype=ir.INTEGER)))
            add_arg(nm, v, intent, dims, nm)
            for bn, text in bound_args:
                add_arg(bn, ir.Variable(bn, ir.INTEGER, line=do.line), "in", [], text)
            continue
        if nm not in written:
            add_arg(nm, v, "in", [], nm)
        elif nm in exposed or flow.is_live_after(do, nm):
            add_arg(nm, v, "inout", [], nm)
        else:
            locals_[nm] = ir.Variable(nm, v.ftype, line=v.line)
    for nm in dim_scalars:
        v = var(nm)
        if nm in arg_names or nm in locals_ or v is None:
            continue
        if v.parameter is not None and not isinstance(v, ir.Argument):
            locals_[nm] = copy.deepcopy(v)
        else:
            add_arg(nm, v, "in", [], nm)
    passed.finish(lambda nm: next(a.dims for a in args if a.name == nm))
    body = [nest]
    calls = []
    for s in ir.walk(body):
        if isinstance(s, ir.CallStmt) and s.name not in calls:
            calls.append(s.name)
        for e in ir.stmt_exprs(s):
            for x in ir.walk_expr(e):
                if isinstance(x, ir.FuncCall) and not x.intrinsic and x.name not in calls:
                    calls.append(x.name)
    k = ir.Kernel(name=name, kind="subroutine", file=kernel.file, line_start=do.line,
                  line_end=do.end_line or do.line, args=args, locals=locals_, body=body, calls=calls,
                  implicit_none=True, source_text=_lines_text(kernel, do))
    effects = None
    if program is not None:  # the callees' effects, asked of the routine the nest came from
        from ..fortran.effects import Calls
        effects = Calls(_nest_program(program, kernel, k))
    analyse_kernel(k, callees, effects)
    return _Outline(k, actuals, passed.uses, passed.passed())


class _NestProgram:
    """The program model seen from an outlined nest: the synthetic kernel is no routine of
    the program, so questions about it are asked about the routine it came from."""

    def __init__(self, program, routine: ir.Kernel, nest: ir.Kernel):
        self._program, self._routine, self._nest = program, routine, nest

    def _as(self, k: ir.Kernel) -> ir.Kernel:
        return self._routine if k is self._nest else k

    def callable_from(self, k: ir.Kernel) -> dict:
        return self._program.callable_from(self._as(k))

    def callee(self, k: ir.Kernel, name: str):
        return self._program.callee(self._as(k), name)

    def __getattr__(self, name):
        attr = getattr(self._program, name)
        if not callable(attr):
            return attr

        def asked_of_the_routine(*args, **kw):  # callees(k), reaches(k), impurities(k), ...
            return attr(*[self._as(a) if isinstance(a, ir.Kernel) else a for a in args], **kw)
        return asked_of_the_routine


def _nest_program(program, routine: ir.Kernel, nest: ir.Kernel):
    return None if program is None else _NestProgram(program, routine, nest)


def _lines_text(kernel: ir.Kernel, do: ir.Do) -> str:
    lines = kernel.source_text.split("\n")
    lo, hi = do.line - kernel.line_start, (do.end_line or do.line) - kernel.line_start
    return "\n".join(lines[max(lo, 0):hi + 1])


# ------------------------------------------------------------------ jumps into a nest


def _jumps(stmts: list[ir.Stmt]) -> list[tuple[int, int]]:
    """(label, line of the jump) for every jump in the statements."""
    out = []
    for s in ir.walk(stmts):
        if isinstance(s, ir.Goto):
            out.append((s.target, s.line))
        elif isinstance(s, ir.ComputedGoto):
            out += [(t, s.line) for t in s.targets]
        elif isinstance(s, ir.ArithmeticIf):
            out += [(t, s.line) for t in s.labels]
        elif isinstance(s, ir.Unsupported):
            out += [(t, s.line) for t in s.targets]
    return out


def _enclosing(body: list[ir.Stmt], target: ir.Stmt) -> list[ir.Do]:
    """The DO loops around ``target``, outermost first."""
    def visit(stmts, outer):
        for s in stmts:
            if s is target:
                return outer
            inner = outer + [s] if isinstance(s, ir.Do) else outer
            r = visit(ir.children(s), inner)
            if r is not None:
                return r
        return None
    return visit(body, []) or []


def end_label_kept(kernel: ir.Kernel, do: ir.Do) -> bool:
    """Raises Keep when a jump from outside the nest lands inside it; True when the nest's
    terminating label must stay as a CONTINUE after the CALL (an enclosing loop that stays
    Fortran ends on the same label: shared DO termination)."""
    inside = {id(s) for s in ir.walk([do])}
    own = {s.label for s in ir.walk(do.body) if s.label is not None}
    if do.end_label is not None:
        own.add(do.end_label)
    outside = [s for s in ir.walk(kernel.body) if id(s) not in inside]
    for label, line in _jumps(outside):
        if label in own:
            raise Keep("goto-into-nest", f"the jump at line {line} lands on label {label} inside the loop nest "
                       f"(lines {do.line}-{do.end_line}): the nest cannot become one call", do.line)
    return do.end_label is not None and any(o.end_label == do.end_label for o in _enclosing(kernel.body, do))


# ------------------------------------------------------------------ the port


def hybrid_port(kernel: ir.Kernel, source: Optional[ir.SourceFile], options: Optional[TranslateOptions] = None,
                *, text: str, why: Optional[list[str]] = None, program=None, name: Optional[str] = None) -> Port:
    """The hybrid port of ``kernel`` (``text``: the whole original file; ``program``: the
    program model, whose callees of any file the nests may inline; ``name``: what the port's
    library, module and kernels are named after, default the routine's name -- two main
    programs of one application both called MAIN need two). Raises TranslationRefused
    (code ``no-parallel-nest``) when no loop nest can run as a kernel."""
    from ..fortran.reader import SourceOptions, source_options

    with source_options(SourceOptions(None, getattr(source, "fixed_length", 72))):  # columns as the file was read
        return _hybrid_port(kernel, source, options, text=text, why=why, program=program, name=name)


def _hybrid_port(kernel: ir.Kernel, source: Optional[ir.SourceFile], options: Optional[TranslateOptions], *,
                 text: str, why: Optional[list[str]], program, name: Optional[str]) -> Port:
    base = (name or kernel.name).lower()
    options = options or TranslateOptions()
    form = source.form if source is not None else ("fixed" if Path(kernel.file).suffix.lower() in (".f", ".for", ".f77")
                                                   else "free")
    main_text = text
    if kernel.text_file:  # the routine is in a header the file includes: the header is what is edited
        try:
            if Path(kernel.text_file).name == Path(kernel.file).name:
                raise OSError("it has the name of the file including it")
            text = Path(kernel.text_file).read_text(errors="replace")
        except OSError as exc:
            raise TranslationRefused(kernel.name, [ir.Diagnostic("nest-not-in-source", f"the header "
                                     f"{kernel.text_file} holding {kernel.name} cannot be copied: {exc}",
                                     kernel.line_start, kernel.file)])
    lines = text.split("\n")
    # the routine itself and, for a main program, its internal procedures (CONTAINed: they
    # see the program's variables, so their nests are outlined in place the same way)
    routines = [kernel] + ([r for r in source.kernels if r.host == kernel.name]
                           if kernel.kind == "program" and source is not None else [])
    outlined: list[tuple[ir.Do, KernelParts, _Outline, tuple[int, int], bool, ir.Kernel]] = []
    kept: list[Kept] = []
    count = 0
    for r in routines:
        prefix = base if r is kernel else f"{base}_{r.name}"
        got, r_kept, r_count = _outline_routine(r, source, options, program, lines, form, prefix)
        outlined += got
        kept += r_kept if r is kernel else [Kept(x.code, x.line, f"in {r.name}: {x.message}") for x in r_kept]
        count += r_count
    if not outlined:
        detail = "; ".join(f"line {k.line}: [{k.code}] {k.message}" for k in kept[:4]) or "it has no loops"
        line = kept[0].line if kept else kernel.line_start
        raise TranslationRefused(kernel.name, [ir.Diagnostic(
            "no-parallel-nest", f"hybrid: no loop nest of {kernel.name} can run as a Kokkos kernel ({detail})",
            line, kernel.file)] + [ir.Diagnostic(k.code, k.message, k.line, kernel.file) for k in kept])
    kept += kept_statements(kernel, [o[0] for o in outlined if o[5] is kernel])
    kept.sort(key=lambda k: k.line)
    k = base
    upper = fortran_text.upper_style(lines, kernel.line_start, form)
    edits, infos = [], []
    for do, parts, o, (first, last), end_continue, _r in outlined:
        actuals = o.actuals
        entry = f"{parts.kernel.name}_kokkos"
        call = f"{'CALL' if upper else 'call'} {entry.upper() if upper else entry}({', '.join(_case(a, upper) for a in actuals)})"
        indent = fortran_text.indentation(lines, do.line, form)
        new = [fortran_text.comment(f"port-fortran: the loop nest of lines {do.line}-{do.end_line} runs as Kokkos kernel "
                         f"{entry} ({', '.join(p for p in parts.patterns if p in PARALLEL_PATTERNS)})", form, indent)]
        if any(lines[i - 1].startswith("#") for i in range(first, last + 1)):
            new.append(fortran_text.comment(f"port-fortran: with its preprocessor branches (lines {first}-{last}): "
                                            "this copy is for the configuration it is compiled with", form, indent))
        new += fortran_text.statement(call, form, indent, do.label)
        if end_continue:
            new += fortran_text.statement("CONTINUE" if upper else "continue", form, indent, do.end_label)
        edits.append(fortran_text.Edit(first, last, new, f"loop nest of lines {do.line}-{do.end_line}"))
        infos.append(Outlined(entry, do.line, do.end_line, list(parts.patterns), list(actuals),
                              "" if _r is kernel else _r.name))
    # a loop that stays Fortran around outlined nests loses its OpenMP/OpenACC loop directive:
    # its iterations now launch Kokkos kernels, which must not run once per thread (and a
    # collapse(2) would miss the loop it collapsed); running them in order is what any
    # schedule of that loop may do
    seen: set[int] = set()
    for do, *_rest, owner in outlined:
        for outer in _enclosing(owner.body, do):
            for first, last in fortran_text.loop_directives(lines, outer.line, outer.end_line or outer.line, form,
                                                           (owner.line_start, owner.line_end)):
                if first in seen:
                    continue
                seen.add(first)
                note = fortran_text.comment(f"port-fortran: directive of the loop of line {outer.line} removed: its "
                                            "body launches Kokkos kernels", form,
                                            fortran_text.indentation(lines, outer.line, form))
                edits.append(fortran_text.Edit(first, last, [note], f"loop directive of line {outer.line}"))
                kept.append(Kept("loop-directive-removed", first, f"the directive of the loop of line {outer.line} "
                                 "is removed: the loop stays Fortran and its body launches Kokkos kernels"))
    region_edits, region_kept = serialised_regions(lines, form, [(do, owner) for do, *_r, owner in outlined],
                                                   [(e.first, e.last) for e in edits], seen)
    edits += region_edits
    kept += region_kept
    kept.sort(key=lambda x: x.line)
    use = f"{'USE' if upper else 'use'} {(k + '_kokkos_mod').upper() if upper else k + '_kokkos_mod'}"
    use_indent = fortran_text.indentation(lines, kernel.line_start, form) + "  " if form == "free" else "      "
    if kernel.kind == "program" and not re.match(r"\s*program\b", fortran_text.code_part(lines[kernel.line_start - 1], form)[1],
                                                 re.IGNORECASE):
        head_last = kernel.line_start - 1  # a program without a PROGRAM statement: USE comes first
        use_indent = fortran_text.indentation(lines, kernel.line_start, form) if form == "free" else "      "
    else:
        head_last = fortran_text.head_end(lines, kernel.line_start, form)
    uses = [fortran_text.statement(u, form, use_indent) for u in use_lines([x for o in outlined for x in o[2].uses], upper)]
    edits.append(fortran_text.Edit(head_last + 1, head_last, fortran_text.statement(use, form, use_indent)
                                   + [ln for u in uses for ln in u], "the interface of the kernels"))
    name = Path(kernel.file).name
    header = Path(kernel.text_file).name if kernel.text_file else ""
    banner = [fortran_text.comment(f"Generated by port-fortran from {header or name}: {k} is a hybrid port.", form),
              fortran_text.comment(f"Loop nests at lines {', '.join(str(i.line) for i in infos)} of the original run as", form),
              fortran_text.comment(f"Kokkos kernels (library {k}_kokkos, module {k}_kokkos_mod).", form)]
    new_lines = banner + fortran_text.apply_edits(lines, edits)
    info = HybridInfo(source=name, original=str(kernel.text_file or kernel.file), routine=k, form=form, nests=count,
                      outlined=infos, kept=kept, why=list(why or []), edits=[e.to_dict() for e in edits],
                      include_dirs_first=[str(Path(kernel.file).resolve().parent)], header=header,
                      module_reads=list(dict.fromkeys(n for o in outlined for n in o[2].module_reads)))
    # a PURE (or ELEMENTAL) routine may call only pure procedures: the kernels' interfaces say so
    head = re.split(r"\b(?:function|subroutine)\b", " ".join(lines[kernel.line_start - 1:max(head_last, kernel.line_start)])
                    .lower(), maxsplit=1)[0].replace("(", " ").split()
    pure = "pure " if "pure" in head or ("elemental" in head and "impure" not in head) else ""
    files = _files(kernel, [o[1] for o in outlined], info, k, pure)
    files[header or name] = "\n".join(new_lines)
    if header:  # the file as it is: it finds the edited header beside it before the original's
        files[name] = main_text
    files["hybrid.json"] = json.dumps(info.to_dict(), indent=1) + "\n"
    patterns = []
    notes = [f"hybrid port: {k} stays Fortran ({name}); {len(infos)} of its {count} loop nests run as Kokkos kernels"]
    for do, parts, *_ in outlined:
        patterns += [p for p in parts.patterns if p not in patterns]
        notes += [f"{parts.kernel.name}: {n}" for n in parts.notes]
    notes += [f"kept in Fortran, line {x.line}: [{x.code}] {x.message}" for x in kept]
    return Port(kernel=k, entry=k, files=files, model="rules", patterns=patterns, notes=notes, options=options,
                mode="hybrid", hybrid=info.to_dict())


def _outline_routine(kernel: ir.Kernel, source, options, program, lines: list[str], form: str, base: str):
    """The outlined nests of one routine: (outlined, kept, number of nests)."""
    planner = _planner(kernel, source, options, program)
    if program is not None:  # what calls write through their arguments, from the callees
        from ..fortran.effects import Calls
        flow = kernel_context(kernel, Calls(program)).flow
    else:
        flow = kernel_context(kernel).flow
    callees = {k.name: k for k in (source.kernels if source is not None else [])}
    if program is not None:
        callees.update(program.callable_from(kernel))
    nests, kept, count = find_nests(kernel.body, planner)
    routine = (kernel.line_start, kernel.line_end)
    outlined = []
    consts = kernel.constants()
    statements = [(x, x.line, getattr(x, "end_line", None) or x.line) for x in ir.walk(kernel.body) if x.line]
    for do in nests:
        name = f"{base}_l{do.line}"
        try:
            trips = _nest_trips(do, consts) if _enclosing(kernel.body, do) else None  # launched again and again
            if trips is not None and trips < SMALL_NEST:
                raise Keep("small-nest", f"the nest runs {trips} iterations (a constant): launching a kernel for it "
                           "costs more than the loop", do.line)
            region = fortran_text.parallel_region(lines, do.line, form, routine)
            if region is not None and region.why_not:
                raise fortran_text.TextRefusal(
                    "openmp-region", f"the loop is inside the OpenMP parallel region of lines {region.first}-"
                    f"{region.last}, which cannot run as serial code ({region.why_not}): a kernel launched there "
                    "would run once per thread", do.line)
            inner = {id(x) for x in ir.walk([do])}  # the other statements: the span must not cut them
            others = [(a, b) for x, a, b in statements if id(x) not in inner]
            span = fortran_text.nest_span(lines, do.line, do.end_line or do.line, form, routine, regions_ok=True,
                                          statements=others)
            end_continue = end_label_kept(kernel, do)
            o = outline(kernel, do, flow, name, callees, program)
            try:
                parts = translate_parts(o.kernel, source, options, _nest_program(program, kernel, o.kernel),
                                        module_reads=True)
            except TranslationRefused as exc:
                d = exc.diagnostics[0]
                raise Keep(d.code, f"the rules cannot translate the nest: {d.message} (line {d.line})", do.line)
            if not set(parts.patterns) & PARALLEL_PATTERNS:
                raise Keep("not-parallel-outlined", "outlined, the nest would run as a single-iteration kernel: "
                           + "; ".join(parts.notes[:2]), do.line)
        except fortran_text.TextRefusal as r:
            kept.append(Kept(r.code, r.line, r.message))
            continue
        except Keep as k:
            kept.append(k.kept)
            continue
        outlined.append((do, parts, o, span, end_continue, kernel))
    return outlined, kept, count


def _case(text: str, upper: bool) -> str:
    return text.upper() if upper else text.lower()


def _files(kernel: ir.Kernel, parts: list[KernelParts], info: HybridInfo, k: str, pure: str = "") -> dict[str, str]:
    file = Path(kernel.file).name if kernel.file else "?"
    kernels = []
    for p in parts:
        kernels.append({
            "name": p.kernel.name, "line_start": p.kernel.line_start, "line_end": p.kernel.line_end,
            "helpers": p.helpers, "commons": p.commons, "views_signature": p.views_signature,
            "views_body": p.views_body, "entry_signature": p.entry_signature, "entry_body": p.entry_body,
            "blocked": p.blocked,
            "views_decl": render.views_signature(p.kernel, p.tab, p.used, with_names=False),
            "entry_decl": render.entry_signature(p.kernel, p.tab, decl=True),
            "module_decls": [ln for d in render.module_decls(p.kernel, p.tab, assumed_last=True) for ln in fortran_text.free_lines(d, " " * 6)],
            "head": fortran_text.free_lines(f"{pure}subroutine {p.kernel.name}_kokkos({', '.join(a.name for a in p.kernel.args)}) "
                                 f"bind(C, name=\"{p.kernel.name}_kokkos\")", " " * 4),
        })
    return {
        f"{k}.kokkos.cpp": render.render("hybrid.cpp.j2", k=k, kind=kernel.kind, file=file, source=info.source,
                                    kernels=kernels),
        f"{k}.kokkos.hpp": render.render("hybrid.hpp.j2", k=k, guard=render.guard(k), source=info.source, kernels=kernels),
        f"{k}_kokkos_mod.f90": render.render("hybrid_module.f90.j2", k=k, source=info.source, kernels=kernels),
        "pf_kokkos_compat.hpp": render.compat_header(),
        "pf_runtime.hpp": render.runtime_header(),
        "pf_strings.hpp": render.strings_header(),
        "CMakeLists.txt": render.render("CMakeLists.txt.j2", k=k),
    }


def load_info(port_dir) -> Optional[dict]:
    """The ``hybrid.json`` of a port directory (None for a full port)."""
    p = Path(port_dir) / "hybrid.json"
    if not p.is_file():
        return None
    return json.loads(p.read_text())




# ------------------------------------------------------------------ choosing the mode

MODES = ("auto", "full", "hybrid")


def translate_mode(kernel: ir.Kernel, source: Optional[ir.SourceFile], options: Optional[TranslateOptions] = None,
                   mode: str = "auto", text: Optional[str] = None, program=None) -> Port:
    """The port of ``kernel`` in ``mode``: 'full' (the rules translator), 'hybrid' (this
    module), 'auto' (full where the rules can, hybrid when they refuse). ``text``: the whole
    original file (read from ``kernel.file`` when None). Raises TranslationRefused; in auto
    mode with the full port's reasons first, then the hybrid one."""
    from .engine import translate_kernel

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
    if mode == "full":
        return translate_kernel(kernel, source, options, program=program)
    why: list[str] = []
    full_diags: list[ir.Diagnostic] = []
    if mode == "auto":
        try:
            return translate_kernel(kernel, source, options, program=program)
        except TranslationRefused as exc:
            full_diags = list(exc.diagnostics)
            why = [f"line {d.line}: [{d.code}] {d.message}" for d in full_diags]
    if text is None:
        text = Path(kernel.file).read_text(errors="replace")
    try:
        return hybrid_port(kernel, source, options, text=text, why=why, program=program)
    except TranslationRefused as exc:
        if not full_diags:
            raise
        raise TranslationRefused(kernel.name, full_diags + exc.diagnostics[:1]) from None


__all__ = ["hybrid_port", "translate_mode", "summary", "find_nests", "outline", "kept_statements", "load_info", "HybridInfo",
           "Kept", "Outlined", "MODES", "PARALLEL_PATTERNS"]


def summary(info: Optional[dict]) -> dict:
    """A hybrid port's info without the text edits and CALL arguments (for the graph state,
    the run database and the reports)."""
    if not info:
        return {}
    return {"source": info.get("source", ""), "nests": info.get("nests", 0),
            "outlined": [{k: o.get(k, "") for k in ("entry", "line", "end_line", "patterns", "routine")}
                         for o in info.get("outlined", [])],
            "kept": [dict(k) for k in info.get("kept", [])], "why": list(info.get("why", []))}
