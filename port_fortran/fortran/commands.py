"""``port-fortran list``: the kernels in files or trees, one line each."""
from __future__ import annotations

import json
import os
import sys

from ..config import parse_defines
from . import ir
from .effects import load_for_port
from .parse import default_include_dirs, discover
from .render import expr_str


def module_search_paths(sources, include_dirs=()) -> list[str]:
    """Where modules are looked for: the files and trees given, the directories of the
    files given alone, the include directories."""
    out: list[str] = []
    for p in sources:
        p = os.path.abspath(str(p))
        for q in ([p] if os.path.isdir(p) else [p, os.path.dirname(p)]):
            if q not in out:
                out.append(q)
    return out + [os.path.abspath(d) for d in include_dirs if os.path.abspath(d) not in out]


def _arg_text(a: ir.Argument) -> str:
    return f"{a.name}:{a.ftype}({a.rank})/{a.intent}"


def _loop_text(s: ir.Stmt) -> str:
    if isinstance(s, ir.Do):
        i = s.info
        codes = []
        for r in i.reasons:
            if r.code not in codes:
                codes.append(r.code)
        cond = getattr(i, "condition", None)
        guard = [f"if {expr_str(cond)}"] if cond is not None else []
        if i.parallel or codes == ["conditional-independence"]:
            # parallel, or parallel exactly when the condition holds (serial otherwise)
            extra = [f"{r.op}:{expr_str(r.target) if r.target is not None else r.var}" for r in i.reductions]
            extra += guard
            verdict = "parallel" + ("[" + ",".join(extra) + "]" if extra else "")
        else:
            verdict = "serial[" + ",".join(guard[0] if c == "conditional-independence" and guard else c
                                           for c in codes) + "]"
        head = f"L{s.line}:{s.var}={verdict}"
    else:
        head = f"L{s.line}:while=serial"
    inner = [_loop_text(x) for x in _top_loops(s.body)]
    return head + ("(" + " ".join(inner) + ")" if inner else "")


def _top_loops(body: list[ir.Stmt]) -> list[ir.Stmt]:
    out = []
    for s in body:
        if isinstance(s, (ir.Do, ir.DoWhile)):
            out.append(s)
        else:
            out += _top_loops(ir.children(s))
    return out


def port_mode(k: ir.Kernel, sf: ir.SourceFile, text: str, program=None) -> dict:
    """How ``--mode auto`` would port the kernel: {'mode': 'full'|'hybrid'|'refused', ...}
    with, for a hybrid port, its nests and what stays Fortran; for a refusal, the reason."""
    from ..records import TranslationRefused
    from ..translate.hybrid import summary, translate_mode

    try:
        port = translate_mode(k, sf, None, "hybrid" if k.kind == "program" else "auto", text, program=program)
    except TranslationRefused as exc:
        d = exc.diagnostics[0] if exc.diagnostics else ir.Diagnostic("refused", str(exc), k.line_start)
        return {"mode": "refused", "code": d.code, "line": d.line, "message": d.message}
    except Exception as exc:  # a translator bug must not hide the listing
        return {"mode": "refused", "code": "internal-error", "line": k.line_start, "message": f"{type(exc).__name__}: {exc}"}
    if port.mode != "hybrid":
        return {"mode": "full", "patterns": list(port.patterns)}
    return {"mode": "hybrid", "patterns": list(port.patterns), **summary(port.hybrid)}


def mode_text(m: dict) -> str:
    if m["mode"] == "full":
        return "mode: full"
    if m["mode"] == "refused":
        return f"mode: none (L{m['line']}:{m['code']})"
    nests = ", ".join(f"L{o['line']}" for o in m["outlined"])
    kept = ", ".join(f"L{x['line']}:{x['code']}" for x in m["kept"])
    return f"mode: hybrid, {len(m['outlined'])} of {m['nests']} nests as kernels ({nests})" + \
        (f", kept in Fortran: {kept}" if kept else "")


def kernel_line(k: ir.Kernel, mode: dict | None = None) -> str:
    where = f"{k.file}:{k.line_start}"
    name = f"{k.module}::{k.name}" if k.module else k.name
    args = "" if k.kind == "program" else f"({', '.join(_arg_text(a) for a in k.args)})"
    parts = [f"{where}: {k.kind} {name}{args}"]
    loops = [_loop_text(s) for s in _top_loops(k.body)]
    parts.append("loops: " + (" ".join(loops) if loops else "none"))
    if k.unsupported:
        parts.append("unsupported: " + ", ".join(f"L{u.line}:{u.construct}" for u in k.unsupported))
    if mode is not None:
        parts.append(mode_text(mode))
    return " | ".join(parts)


def _loop_json(s: ir.Stmt) -> dict:
    if isinstance(s, ir.Do):
        i = s.info
        d = {"line": s.line, "var": s.var, "parallel": i.parallel, "depth": i.tightly_nested_parallel,
             "reductions": [{"var": r.var, "op": r.op, "target": expr_str(r.target) if r.target is not None else None}
                            for r in i.reductions],
             "private": i.private, "indirect": i.indirect, "scattered": i.scattered, "calls": i.calls,
             "early_exit": i.early_exit,
             "condition": expr_str(i.condition) if getattr(i, "condition", None) is not None else None,
             "condition_args": list(getattr(i, "condition_args", []) or []),
             "reasons": [{"code": r.code, "message": r.message, "line": r.line} for r in i.reasons]}
    else:
        d = {"line": s.line, "var": None, "parallel": False, "while": True, "reasons": []}
    d["inner"] = [_loop_json(x) for x in _top_loops(s.body)]
    return d


def kernel_json(k: ir.Kernel, mode: dict | None = None) -> dict:
    return {
        "mode": mode,
        "name": k.name, "kind": k.kind, "file": k.file, "line": k.line_start, "line_end": k.line_end,
        "module": k.module,
        "args": [{"name": a.name, "type": str(a.ftype), "rank": a.rank, "intent": a.intent,
                  "intent_declared": a.intent_declared} for a in k.args],
        "loops": [_loop_json(s) for s in _top_loops(k.body)],
        "unsupported": [{"construct": u.construct, "reason": u.reason, "line": u.line} for u in k.unsupported],
        "calls": k.calls, "has_openmp": k.has_openmp, "host": k.host, "host_vars": sorted(k.host_vars),
    }


def _calls_text(prog, k: ir.Kernel) -> list[str]:
    parts = []
    cs = prog.callees(k)
    if cs:
        parts.append("calls: " + ", ".join(_callee_text(prog, k, c) for c in cs))
    callers = prog.callers(k)
    if callers:
        parts.append("called by: " + ", ".join(f"{r.name} ({prog.given.get(r.file, r.file)}:{r.line})"
                                               for r in callers))
    return parts


def _callee_text(prog, k: ir.Kernel, c) -> str:
    if c.routine is not None:
        where = "" if c.routine.file == prog.routine_of(k).file else f" ({prog.given.get(c.routine.file)}:{c.routine.line})"
        amb = " [also in " + ", ".join(prog.given.get(r.file, r.file) for r in c.alternatives) + "]" \
            if c.alternatives else ""
        return c.name + where + amb
    return c.describe()


def program_of(sources, include=(), defines=None, files=None):
    """The program model of the files and trees given, as ``run`` builds it: every file and
    tree on the command line is one program (calls resolve across them; modules USEd in one
    file and defined in another are looked for in everything given, and beside the files
    given alone, as a compiler run in their directory would); include directories named
    include/inc inside the trees come after the user's."""
    from .program_build import build_program, parse_with_modules

    include = list(include or [])
    include += [d for d in default_include_dirs(sources) if d not in include]
    search = module_search_paths(sources, include)
    return build_program(sources, include_dirs=include, defines=defines or {},
                         files=files if files is not None else discover(sources),
                         parse=lambda p, inc, d, modules=None: parse_with_modules(p, inc, d, modules, search))


def as_run_loads(prog, path, k: ir.Kernel, sf: ir.SourceFile) -> tuple[ir.Kernel, ir.SourceFile]:
    """``k`` of file ``path`` as ``run``'s stages load it (effects.load_for_port: calls to
    routines that only read COMMON pass the members), so ``list`` and ``translate`` answer
    what ``run`` acts on; a main program, and the second of two internal procedures of the
    same name, as parsed."""
    if k.kind != "program" and prog.routine(path, k.name) is not None and prog.kernel(path, k.name) is k:
        return load_for_port(prog, path, k.name)
    return k, sf


def cmd_list(args) -> int:
    files = discover(args.sources)
    include = list(getattr(args, "include", []) or [])
    defines = parse_defines(getattr(args, "define", None) or [])
    bad = False
    out_json = []
    if not files:
        print("port-fortran: error: no Fortran files found in " + " ".join(args.sources), file=sys.stderr)
        return 2
    prog = program_of(args.sources, include, defines, files)
    for f in files:
        sf = prog.file(f)
        try:
            text = open(f, errors="replace").read()
        except OSError:
            text = ""
        modes = {k.name: port_mode(*as_run_loads(prog, f, k, sf), text, prog)
                 for k in sf.kernels + sf.program_units} if text else {}
        if sf.errors:
            bad = True
        if args.json:
            out_json.append({"path": sf.path, "form": sf.form, "modules": sf.modules, "programs": sf.programs,
                             "internal_procedures": sf.internal_procedures, "missing_modules": sf.missing_modules,
                             "errors": [{"code": e.code, "message": e.message, "file": e.file or sf.path, "line": e.line}
                                        for e in sf.errors],
                             "kernels": [{**kernel_json(k, modes.get(k.name)), **prog.routine_json(k)}
                                         for k in sf.kernels],
                             "program_units": [kernel_json(k, modes.get(k.name)) for k in sf.program_units]})
            continue
        for e in sf.errors:
            print(f"{e.file or sf.path}:{e.line}: error: {e.message}", file=sys.stderr)
        for m, line in sf.missing_modules.items():
            print(f"{sf.path}:{line}: note: module {m} is not in this file nor in the files given: what uses its "
                  "names is refused (give the file that defines it)", file=sys.stderr)
        for k in sf.kernels:
            print(" | ".join([kernel_line(k, modes.get(k.name))] + _calls_text(prog, k)))
        for k in sf.program_units:
            print(kernel_line(k, modes.get(k.name)))
        if not sf.kernels and not sf.errors:
            what = []
            if sf.programs:
                what.append(f"program {', '.join(sf.programs)}")
            if sf.internal_procedures:
                what.append("internal procedures " + ", ".join(x.split(":", 1)[1] for x in sf.internal_procedures))
            if sf.modules:
                what.append(f"module {', '.join(sf.modules)}")
            print(f"{sf.path}: no kernels" + (f" ({'; '.join(what)})" if what else ""))
        sys.stdout.flush()
    if args.json:
        print(json.dumps(out_json, indent=1))
        return 2 if bad else 0
    for name, callers in prog.externals().items():
        lib = prog.callee(callers[0], name).library if prog.callee(callers[0], name) else ""
        print(f"external {name}{' (' + lib + ')' if lib else ''}: not defined in any file given; called by "
              + ", ".join(sorted({f"{r.name} ({prog.given.get(r.file, r.file)}:{r.line})" for r in callers})))
    for d in prog.notes:
        print(f"{d.file}:{d.line}: note: [{d.code}] {d.message}")
    for m in prog.external_modules():
        print(f"external module {m}: used but not defined in any file given")
    for name, defs in prog.ambiguous().items():
        print(f"ambiguous {name}: defined in " + ", ".join(f"{prog.given.get(r.file, r.file)}:{r.line}"
                                                          for r in defs if r.module is None)
              + " (a caller gets the one in its own directory, else the first)")
    return 2 if bad else 0
