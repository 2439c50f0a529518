"""Keeping host code coherent with arrays the ports keep on the device (pure).

On a GPU whose memory the host cannot address, a port's entry keeps the arrays of
*registered* storage on the device between calls (``pf_runtime.hpp``): copied in only when
the host may have changed them, left there when the port wrote them. This module decides
where the modern tree registers storage and where host code must sync, and writes those
calls as text edits (``CALL PF_RESIDENT(U)``, ``CALL PF_HOST_READ(U)``,
``CALL PF_HOST_WRITE(U)``, ``CALL PF_RELEASE(U)``, through ``USE PF_RUNTIME_MOD``).

The rules (correct whatever the ports do; on host backends every call returns at once):

* **Device routines** are the ported routines (full: the routine's body is the call; hybrid:
  its outlined nests) and every routine that calls one, transitively (the main program
  included). Calls of device routines and outlined nests are *device statements*.
* **Registration** (what may stay resident): storage that lives as long as the program --
  COMMON members, module variables, SAVEd locals and main-program variables -- registered at
  the entry of every device routine that declares it (cheap when already registered), and
  after an ALLOCATE of such an allocatable. Dummies, automatic arrays and compiler
  temporaries are never registered: a port copies them per call, as before.
* **Statement-level coherence in device routines**: before each *maximal host statement* (a
  statement with no device statement inside; for compound statements holding device
  statements: their header), ``PF_HOST_WRITE`` for every array it may write and
  ``PF_HOST_READ`` for every array it may only read -- arrays it names, and arrays it passes
  to routines that are not device routines (their dummies' intents say read or write).
  Local arrays of non-static storage are left out (never registered, never aliased).
  Marking before the writes is enough: no port runs inside a host statement.
* **Other routines** may touch registered storage only through COMMON and module
  variables (their dummies are covered at the call site in a device routine): at their
  entry, ``PF_HOST_WRITE``/``PF_HOST_READ`` for the COMMON and module arrays that some
  device routine declares.
* **Release** before every DEALLOCATE, MOVE_ALLOC and whole-array assignment of an
  allocatable of static storage (anywhere): the range is forgotten before the memory goes.

A jump to a labelled host statement would skip a call placed before it: the label moves to
a ``CONTINUE`` above the calls. Where that cannot be done, or where the rules do not hold
(pointers, internal procedures of a device routine, NAMELIST I/O, a device and a host
statement on one line), residency is off for the whole program (:attr:`Plan.off` says
where and why): nothing is registered, every port copies per call, as before -- correct,
slower.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Optional

from ..fortran import ir
from ..translate import fortran_text
from .modern import first_executable

RESIDENT, READ, WRITE, RELEASE = "PF_RESIDENT", "PF_HOST_READ", "PF_HOST_WRITE", "PF_RELEASE"
MODULE = "pf_runtime_mod"


class Off(Exception):
    """Residency cannot be kept correct by these rules in this program."""

    def __init__(self, where: str, why: str):
        super().__init__(f"{where}: {why}")
        self.where, self.why = where, why


@dataclass
class Routine:
    """What the plan needs of one routine."""

    kernel: ir.Kernel
    key: tuple[str, str]  # (file, name)
    mode: str = ""  # 'full' | 'hybrid' | '' (not ported)
    outlined: set = field(default_factory=set)  # DO lines of a hybrid port's outlined nests
    device: bool = False  # a device routine (ported, or calls one)


@dataclass
class Plan:
    edits: dict = field(default_factory=dict)  # file -> [Edit]
    calls: dict = field(default_factory=dict)  # file -> number of calls inserted
    off: Optional[str] = None  # residency off: where and why
    device_routines: list = field(default_factory=list)
    registered: list = field(default_factory=list)  # "routine: names" registered at its entry

    def count(self) -> int:
        return sum(self.calls.values())


# ------------------------------------------------------------------ variables


def _var(k: ir.Kernel, name: str) -> Optional[ir.Variable]:
    for a in k.args:
        if a.name == name:
            return a
    if k.result is not None and k.result.name == name:
        return k.result
    return k.locals.get(name) or k.module_vars.get(name)


def _is_array(k: ir.Kernel, name: str) -> bool:
    v = _var(k, name)
    return v is not None and bool(v.dims) and v.parameter is None


def static_storage(k: ir.Kernel, v: ir.Variable) -> bool:
    """Storage that lives as long as the program (what may be registered)."""
    if isinstance(v, ir.Argument) or v.parameter is not None:
        return False
    return v.common is not None or v.module is not None or v.save or k.kind == "program" \
        or v.name in k.module_vars


def _syncable(k: ir.Kernel, name: str) -> bool:
    """An array host code must sync: one that may be (or alias) registered storage."""
    v = _var(k, name)
    if v is None or not v.dims or v.parameter is not None:
        return False
    return isinstance(v, ir.Argument) or static_storage(k, v)


# ------------------------------------------------------------------ effects of statements


def _names(e: Optional[ir.Expr]) -> list[str]:
    out = []
    if e is None:
        return out
    for x in ir.walk_expr(e):
        if isinstance(x, (ir.Name, ir.ArrayRef)):
            out.append(x.name)
    return out


def _base(e: ir.Expr) -> Optional[str]:
    return e.name if isinstance(e, (ir.Name, ir.ArrayRef)) else None


class Effects:
    """Arrays a statement may read and write (names of the routine's scope)."""

    def __init__(self):
        self.reads: dict[str, None] = {}
        self.writes: dict[str, None] = {}

    def read(self, names: Iterable[str]) -> None:
        for n in names:
            self.reads.setdefault(n)

    def write(self, names: Iterable[str]) -> None:
        for n in names:
            self.writes.setdefault(n)


class Planner:
    def __init__(self, program, routines: dict, mains: list):
        self.program = program
        self.routines = routines  # key -> Routine
        self.mains = mains

    # ---------------------------------------------------------------- calls

    def callee(self, r: Routine, name: str) -> Optional[Routine]:
        prog = self.program
        if r.kernel.kind != "program":
            c = prog.callee(prog.routine(r.kernel.file, r.kernel.name) or r.kernel, name)
            if c is not None and c.routine is not None:
                return self.routines.get((c.routine.file, c.routine.name))
        defs = [d for d in prog.routines.get(name, []) if d.module is None] or prog.routines.get(name, [])
        return self.routines.get((defs[0].file, defs[0].name)) if defs else None

    def is_device(self, r: Routine, s: ir.Stmt) -> bool:
        if isinstance(s, ir.Do) and s.line in r.outlined:
            return True
        if isinstance(s, ir.CallStmt):
            c = self.callee(r, s.name)
            return c is not None and c.device
        return False

    def holds_device(self, r: Routine, s: ir.Stmt) -> bool:
        return self.is_device(r, s) or any(self.holds_device(r, c) for c in ir.children(s))

    def _call_effects(self, r: Routine, name: str, args: list[ir.Expr], eff: Effects) -> None:
        c = self.callee(r, name)
        intents = None
        if c is not None:
            intents = [a.intent for a in c.kernel.args]
        for i, a in enumerate(args):
            for n in _names(a):  # subscripts and expressions are read
                eff.read([n])
            b = _base(a)
            if b is None:
                continue
            if c is not None and c.device:
                continue  # the port's entry handles its arguments
            intent = intents[i] if intents is not None and i < len(intents) else "inout"
            if intent != "in":
                eff.write([b])

    def effects(self, r: Routine, stmts: list[ir.Stmt], eff: Optional[Effects] = None) -> Effects:
        eff = eff or Effects()
        k = r.kernel
        for s in stmts:
            if isinstance(s, ir.Assign):
                eff.write([s.target.name])
                if isinstance(s.target, ir.ArrayRef):
                    for x in s.target.subscripts:
                        eff.read(_names(x))
                eff.read(_names(s.value))
                self._funcs(r, s.value, eff)
            elif isinstance(s, ir.CallStmt):
                self._call_effects(r, s.name, s.args, eff)
            elif isinstance(s, ir.Unsupported):
                words = re.findall(r"[a-z_]\w*", s.text.lower())
                if re.match(r"\s*namelist\b", s.text, re.I) or re.search(r"\bnml\s*=", s.text, re.I):
                    raise Off(f"{k.file}:{s.line}", "NAMELIST I/O names arrays the statement does not show")
                reads = s.reads if s.reads is not None else words
                writes = s.writes if s.writes is not None else words
                eff.read(reads)
                eff.write(writes)
            else:
                for e in ir.stmt_exprs(s):
                    eff.read(_names(e))
                    self._funcs(r, e, eff)
            if not isinstance(s, ir.Unsupported):
                self.effects(r, ir.children(s), eff)
        return eff

    def _funcs(self, r: Routine, e: ir.Expr, eff: Effects) -> None:
        for x in ir.walk_expr(e):
            if isinstance(x, ir.FuncCall) and not x.intrinsic:
                self._call_effects(r, x.name, x.args, eff)


# ------------------------------------------------------------------ text


class Writer:
    """Edits of one file: calls before statements, after statements, at entries."""

    def __init__(self, path: str, lines: list[str], form: str, protected: Iterable[tuple[int, int]] = ()):
        self.path, self.lines, self.form = path, lines, form
        self.protected = list(protected)  # line spans other edits replace (hybrid ports' nests)
        self.edits: list[fortran_text.Edit] = []
        self.calls = 0
        self.used: set[tuple[int, int]] = set()  # routines (line span) that got a USE
        self.relabelled: set[int] = set()

    def upper(self, k: ir.Kernel) -> bool:
        return fortran_text.upper_style(self.lines, k.line_start, self.form)

    def call_lines(self, k: ir.Kernel, what: str, names: list[str], line: int,
                   guards: dict[str, str]) -> list[str]:
        up = self.upper(k)
        indent = fortran_text.indentation(self.lines, line, self.form) if not fortran_text.is_comment(self.lines[line - 1], self.form) \
            else ("      " if self.form == "fixed" else "  ")
        out = []
        for n in names:
            call = f"call {what.lower()}({n})"
            if n in guards:
                call = f"if ({guards[n]}({n})) {call}"
            out += fortran_text.statement(call.upper() if up else call, self.form, indent)
            self.calls += 1
        return out

    def use(self, k: ir.Kernel) -> None:
        span = (k.line_start, k.line_end)
        if span in self.used:
            return
        self.used.add(span)
        from .modern import use_edit
        self.edits.append(use_edit(self.lines, k, self.form, MODULE, self.upper(k)))

    def before(self, k: ir.Kernel, s: ir.Stmt, text: list[str], jump_targets: set[int],
               do_terminals: set[int]) -> None:
        if not text:
            return
        line = s.line
        if not (k.line_start < line <= k.line_end) or line > len(self.lines):
            raise Off(f"{k.file}:{line}", "a statement outside the routine's lines (INCLUDE or macro text)")
        if s.label is not None and s.label in jump_targets:
            if s.label in do_terminals:
                raise Off(f"{k.file}:{line}", f"label {s.label} ends a DO loop and is jumped to: a call cannot go "
                          "before its statement")
            if line in self.relabelled:
                raise Off(f"{k.file}:{line}", "two relabellings of one line")
            self.relabelled.add(line)
            lab = self.lines[line - 1]
            if self.form == "fixed":
                from ..fortran.reader import clean_fixed
                lab_free = "     " + clean_fixed(lab)[5:]
            else:
                lab_free = re.sub(r"^(\s*)\d{1,5}(\s+)", lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))),
                                  lab, count=1)
            up = self.upper(k)
            indent = fortran_text.indentation(self.lines, line, self.form)
            cont = fortran_text.statement("CONTINUE" if up else "continue", self.form, indent, s.label)
            self.edits.append(fortran_text.Edit(line, line, cont + text + [lab_free], f"calls before line {line} (label moved)"))
            return
        at = self._directive_start(k, line)
        for a, b in self.protected:  # never inside a span another edit replaces: above it
            if a < at <= b:
                at = a
        self.edits.append(fortran_text.Edit(at, at - 1, text, f"calls before line {line}"))

    def after(self, k: ir.Kernel, s: ir.Stmt, text: list[str]) -> None:
        if not text:
            return
        last = fortran_text.head_end(self.lines, s.line, self.form)
        self.edits.append(fortran_text.Edit(last + 1, last, text, f"calls after line {s.line}"))

    def _directive_start(self, k: ir.Kernel, line: int) -> int:
        """The line above ``line``'s directives (``!$omp ...``) that belong to it."""
        at = line
        i = line - 1
        while i > k.line_start:
            ln = self.lines[i - 1]
            d = fortran_text.directive(ln, self.form)
            if d is not None and not re.match(r"(omp|acc)\s+end\b", d) \
                    and not any(a <= i <= b for a, b in self.protected):
                at = i
                i -= 1
                continue
            if fortran_text.is_comment(ln, self.form) and ln.strip() and at != line:
                i -= 1
                continue
            break
        return at


def _jumps(k: ir.Kernel) -> tuple[set[int], set[int]]:
    targets: set[int] = set()
    terminals: set[int] = set()
    for s in ir.walk(k.body):
        if isinstance(s, ir.Goto):
            targets.add(s.target)
        elif isinstance(s, ir.ComputedGoto):
            targets |= set(s.targets)
        elif isinstance(s, ir.ArithmeticIf):
            targets |= set(s.labels)
        elif isinstance(s, ir.Unsupported):
            targets |= set(s.targets)
        if isinstance(s, ir.Do) and s.end_label is not None:
            terminals.add(s.end_label)
    return targets, terminals


# ------------------------------------------------------------------ the plan


def plan(program, mains: list, ported: dict, texts: dict, forms: dict, protected: Optional[dict] = None) -> Plan:
    """The coherence edits of the modern tree. ``ported``: (file, name) -> ('full' |
    'hybrid', outlined DO lines); ``texts``/``forms``: each file's original lines and form;
    ``protected``: file -> line spans other edits replace. Never raises: a program the rules
    cannot keep coherent gets ``Plan.off``."""
    try:
        return _plan(program, mains, ported, texts, forms, protected or {})
    except Off as exc:
        return Plan(off=f"{exc.where}: {exc.why}")


def _plan(program, mains, ported, texts, forms, protected) -> Plan:
    from ..fortran.program import norm

    routines: dict = {}
    for r in program.all_routines():
        k = program.kernel_of(r)
        mode, outlined = ported.get((norm(r.file), r.name), ("", set()))
        routines[(r.file, r.name)] = Routine(k, (r.file, r.name), mode, set(outlined))
    for m in mains:
        mode, outlined = ported.get((norm(m.file), m.name), ("", set()))
        routines[(norm(m.file), m.name)] = Routine(m, (norm(m.file), m.name), mode, set(outlined))
    pl = Planner(program, routines, mains)
    # device routines: the ported ones and, transitively, their callers
    for r in routines.values():
        r.device = bool(r.mode)
    changed = True
    while changed:
        changed = False
        for r in routines.values():
            if r.device:
                continue
            for s in ir.walk(r.kernel.body):
                if isinstance(s, ir.CallStmt) or any(isinstance(x, ir.FuncCall) for e in ir.stmt_exprs(s)
                                                     for x in ir.walk_expr(e)):
                    names = [s.name] if isinstance(s, ir.CallStmt) else []
                    names += [x.name for e in ir.stmt_exprs(s) for x in ir.walk_expr(e)
                              if isinstance(x, ir.FuncCall) and not x.intrinsic]
                    if any((c := pl.callee(r, n)) is not None and c.device for n in names):
                        r.device = True
                        changed = True
                        break
    out = Plan()
    device = [r for r in routines.values() if r.device]
    out.device_routines = [f"{r.kernel.name} ({r.kernel.file}:{r.kernel.line_start})" for r in device]
    if not device:
        return out
    hosts = {(norm(q.file), program.kernel_of(q).host) for q in program.all_routines() if program.kernel_of(q).host}
    for r in device:
        k = r.kernel
        if (norm(k.file), k.name) in hosts:
            raise Off(f"{k.file}:{k.line_start}", f"{k.name} has internal procedures (host association hides what "
                      "they touch)")
        for u in k.unsupported:
            if "pointer" in (u.construct + " " + u.reason).lower():
                raise Off(f"{k.file}:{u.line}", f"{k.name}: pointers may alias arrays kept on the device")
    # COMMON blocks and module variables some device routine declares: what may be registered
    device_commons = {c.name for r in device for c in r.kernel.commons}
    device_modvars = {n for r in device for n, v in r.kernel.module_vars.items() if v.dims}
    writers: dict[str, Writer] = {}

    def writer(k: ir.Kernel) -> Writer:
        f = norm(k.file)
        if f not in writers:
            if f not in texts:
                raise Off(f"{k.file}:{k.line_start}", "the file's text is not available")
            writers[f] = Writer(f, texts[f], forms[f], protected.get(f, ()))
        return writers[f]

    def guards(k: ir.Kernel, names: list[str]) -> dict[str, str]:
        g = {}
        for n in names:
            v = _var(k, n)
            if v is not None and v.allocatable:
                g[n] = "allocated"
            elif isinstance(v, ir.Argument) and v.optional:
                g[n] = "present"
        return g

    for r in routines.values():
        k = r.kernel
        w = None
        first = first_executable(k)
        if r.device:
            w = writer(k)
            # registration of static storage at the entry
            static = [n for n in _scope_arrays(k) if static_storage(k, _var(k, n))]
            if static and first is not None:
                w.use(k)
                text = w.call_lines(k, RESIDENT, static, first.line, guards(k, static))
                w.before(k, first, text, set(), set())  # entry: no label issue (a jump to the first
                out.registered.append(f"{k.name}: {', '.join(static)}")  # statement skips a no-op)
            if r.mode == "full":
                continue  # the body is the port's call
            targets, terminals = _jumps(k)
            _statements(pl, r, w, k.body, targets, terminals, guards)
        else:
            try:
                touched = pl.effects(r, k.body)
            except Off:  # what it touches is not all visible: every COMMON and module array, written
                touched = Effects()
                touched.write(_scope_arrays(k))
            names = [n for n in dict.fromkeys(list(touched.writes) + list(touched.reads))
                     if _is_array(k, n) and ((_var(k, n).common in device_commons and _var(k, n).common is not None)
                                             or n in device_modvars)]
            if names and first is not None:
                w = writer(k)
                w.use(k)
                wr = [n for n in names if n in touched.writes]
                rd = [n for n in names if n not in touched.writes]
                text = w.call_lines(k, WRITE, wr, first.line, guards(k, wr)) + \
                    w.call_lines(k, READ, rd, first.line, guards(k, rd))
                w.before(k, first, text, set(), set())
                for s in ir.walk(k.body):  # a second ENTRY runs the same calls
                    if isinstance(s, ir.Unsupported) and s.construct == "entry":
                        w.after(k, s, w.call_lines(k, WRITE, wr, s.line, guards(k, wr))
                                + w.call_lines(k, READ, rd, s.line, guards(k, rd)))
        # releases before the memory of an allocatable of static storage goes (any routine)
        if r.mode != "full":
            _releases(pl, r, lambda: writer(k), guards)
    for f, w in writers.items():
        if w.edits:
            out.edits[f] = w.edits
            out.calls[f] = w.calls
    return out


def _scope_arrays(k: ir.Kernel) -> list[str]:
    names = [n for n, v in k.locals.items() if v.dims and v.parameter is None]
    names += [n for n, v in k.module_vars.items() if v.dims and v.parameter is None and n not in names]
    return names


def _statements(pl: Planner, r: Routine, w: Writer, stmts: list[ir.Stmt], targets, terminals, guards) -> None:
    k = r.kernel
    lines_with_device = {s.line for s in ir.walk(stmts) if pl.is_device(r, s)}
    for s in stmts:
        if pl.is_device(r, s):
            continue
        if pl.holds_device(r, s):
            # the header is host code (DO bounds, IF and CASE conditions, all evaluated before
            # any device statement inside runs); the blocks are visited
            eff = Effects()
            if isinstance(s, ir.DoWhile):
                if any(_syncable(k, n) for n in _names(s.cond)):
                    raise Off(f"{k.file}:{s.line}", "a DO WHILE condition reads an array the loop's ports may write")
            for e in ir.stmt_exprs(s):
                eff.read(_names(e))
                pl._funcs(r, e, eff)
            _emit(w, k, s, eff, targets, terminals, guards)
            _statements(pl, r, w, ir.children(s), targets, terminals, guards)
            continue
        if s.line in lines_with_device:
            raise Off(f"{k.file}:{s.line}", "a host statement shares its line with a port's call")
        eff = pl.effects(r, [s])
        _emit(w, k, s, eff, targets, terminals, guards)
        # registration after an ALLOCATE of static storage
        if isinstance(s, ir.Unsupported) and re.match(r"\s*allocate\b", s.text, re.I):
            got = [n for n in (s.writes or []) if _is_array(k, n) and static_storage(k, _var(k, n))]
            if got:
                w.use(k)
                w.after(k, s, w.call_lines(k, RESIDENT, got, s.line, guards(k, got)))


def _emit(w: Writer, k: ir.Kernel, s: ir.Stmt, eff: Effects, targets, terminals, guards) -> None:
    wr = [n for n in eff.writes if _syncable(k, n)]
    rd = [n for n in eff.reads if _syncable(k, n) and n not in eff.writes]
    if isinstance(s, ir.Unsupported) and re.match(r"\s*(de)?allocate\b", s.text, re.I):
        return  # allocation statements: releases and registrations, not syncs
    if not wr and not rd:
        return
    w.use(k)
    text = w.call_lines(k, WRITE, wr, s.line, guards(k, wr)) + w.call_lines(k, READ, rd, s.line, guards(k, rd))
    w.before(k, s, text, targets, terminals)


def _releases(pl: Planner, r: Routine, get_writer, guards) -> None:
    k = r.kernel
    targets, terminals = _jumps(k)
    for s in ir.walk(k.body):
        names: list[str] = []
        if isinstance(s, ir.Unsupported) and re.match(r"\s*deallocate\b", s.text, re.I):
            names = [n for n in re.findall(r"[a-z_]\w*", s.text.lower()[len("deallocate"):])
                     if _is_array(k, n) and _var(k, n).allocatable]
        elif isinstance(s, ir.CallStmt) and s.name == "move_alloc":
            names = [b for b in (_base(a) for a in s.args) if b and _is_array(k, b)]
        elif isinstance(s, ir.Assign) and isinstance(s.target, ir.Name) and _is_array(k, s.target.name) \
                and _var(k, s.target.name).allocatable and any(
                    isinstance(x, (ir.Name, ir.ArrayRef, ir.FuncCall, ir.ArrayConstructor)) for x in ir.walk_expr(s.value)):
            names = [s.target.name]  # may reallocate to the shape of its right-hand side
        names = [n for n in names if static_storage(k, _var(k, n)) or isinstance(_var(k, n), ir.Argument)]
        if names:
            w = get_writer()
            w.use(k)
            w.before(k, s, w.call_lines(k, RELEASE, names, s.line, guards(k, names)), targets, terminals)


__all__ = ["plan", "Plan", "Off", "static_storage"]
