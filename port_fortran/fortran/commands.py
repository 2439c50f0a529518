"""``port-fortran list``: the kernels in files or trees, one line each."""
from __future__ import annotations

import json
import sys

from . import ir
from .parse import default_include_dirs, discover, parse_file
from .render import expr_str


def parse_defines(items) -> dict[str, str]:
    out: dict[str, str] = {}
    for d in items or []:
        name, _, value = d.partition("=")
        if name:
            out[name.strip()] = value.strip() if value else "1"
    return out


def _arg_text(a: ir.Argument) -> str:
    return f"{a.name}:{a.ftype}({a.rank})/{a.intent}"


def _loop_text(s: ir.Stmt) -> str:
    if isinstance(s, ir.Do):
        i = s.info
        if i.parallel:
            verdict = "parallel"
            extra = [f"{r.op}:{expr_str(r.target) if r.target is not None else r.var}" for r in i.reductions]
            if extra:
                verdict += "[" + ",".join(extra) + "]"
        else:
            codes = []
            for r in i.reasons:
                if r.code not in codes:
                    codes.append(r.code)
            verdict = "serial[" + ",".join(codes) + "]"
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


def port_mode(k: ir.Kernel, sf: ir.SourceFile, text: str) -> dict:
    """How ``--mode auto`` would port the kernel: {'mode': 'full'|'hybrid'|'refused', ...}
    with, for a hybrid port, its nests and what stays Fortran; for a refusal, the reason."""
    from ..records import TranslationRefused
    from ..translate.hybrid import summary, translate_mode

    try:
        port = translate_mode(k, sf, None, "hybrid" if k.kind == "program" else "auto", text)
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
        "calls": k.calls, "has_openmp": k.has_openmp,
    }


def cmd_list(args) -> int:
    files = discover(args.sources)
    include = list(getattr(args, "include", []) or [])
    defines = parse_defines(getattr(args, "define", []))
    bad = False
    out_json = []
    if not files:
        print("port-fortran: error: no Fortran files found in " + " ".join(args.sources), file=sys.stderr)
        return 2
    include += [d for d in default_include_dirs(args.sources) if d not in include]
    for f in files:
        sf = parse_file(f, include_dirs=include, defines=defines)
        try:
            text = open(f, errors="replace").read()
        except OSError:
            text = ""
        modes = {k.name: port_mode(k, sf, text) for k in sf.kernels + sf.program_units} if text else {}
        if sf.errors:
            bad = True
        if args.json:
            out_json.append({"path": sf.path, "form": sf.form, "modules": sf.modules, "programs": sf.programs,
                             "internal_procedures": sf.internal_procedures,
                             "errors": [{"code": e.code, "message": e.message, "file": e.file or sf.path, "line": e.line}
                                        for e in sf.errors],
                             "kernels": [kernel_json(k, modes.get(k.name)) for k in sf.kernels],
                             "program_units": [kernel_json(k, modes.get(k.name)) for k in sf.program_units]})
            continue
        for e in sf.errors:
            print(f"{e.file or sf.path}:{e.line}: error: {e.message}", file=sys.stderr)
        for k in sf.kernels + sf.program_units:
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
