"""``port-fortran translate FILE [--kernel NAME] -o DIR``: write ports without building them.

Prints one line per kernel, ``<kernel>: ported (patterns)`` or
``<kernel>: not ported: file:line [code] reason`` (``--mode``: full, hybrid or auto, as for
the whole job); exits 0 when every kernel attempted was
ported, 1 otherwise, 2 on bad input (unreadable file, syntax errors, unknown kernel)."""
from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from ..records import TranslationRefused
from .engine import write_port
from .hybrid import translate_mode


def _program(path: str, include, define):
    """The program model of the one file, as ``run`` builds it for that file."""
    from ..config import parse_defines
    from ..fortran.commands import program_of

    p = Path(path)
    if not p.is_file():
        raise UserError(f"{path}: no such file (give a Fortran source file)")
    return program_of([str(p)], include, parse_defines(define or []), files=[p])


def cmd_translate(args) -> int:
    from ..fortran.commands import as_run_loads

    prog = _program(args.source, getattr(args, "include", []), getattr(args, "define", []))
    sf = prog.file(args.source)
    if sf.errors and not sf.kernels and not sf.program_units:
        e = sf.errors[0]
        raise UserError(f"{e.file or args.source}:{e.line}: {e.message} (fix the source, or pass -I/-D for "
                        "includes and macros)")
    # main programs stay Fortran: their ports are hybrid (port-fortran program proves them)
    units = sf.kernels + sf.program_units
    kernels = units
    if args.kernel:
        kernels = [k for k in units if k.name == args.kernel.lower()]
        if not kernels:
            names = ", ".join(k.name for k in units) or "none"
            raise UserError(f"{args.source}: no kernel named '{args.kernel}' (kernels found: {names})")
    if not kernels:
        raise UserError(f"{args.source}: no subroutines, functions or main programs found")
    out = Path(args.output)
    failed = 0
    mode = getattr(args, "mode", None) or "auto"
    text = Path(args.source).read_text(errors="replace")
    for k in kernels:
        try:
            kk, ksf = as_run_loads(prog, args.source, k, sf)
            port = translate_mode(kk, ksf, None, "hybrid" if k.kind == "program" else mode, text, program=prog)
        except TranslationRefused as exc:
            failed += 1
            d = exc.diagnostics[0]
            more = f" (+{len(exc.diagnostics) - 1} more)" if len(exc.diagnostics) > 1 else ""
            print(f"{k.name}: not ported: {d.file or k.file or args.source}:{d.line} [{d.code}] {d.message}{more}")
            continue
        write_port(port, out / k.name)
        how = ", ".join(port.patterns) or "host only"
        if port.mode == "hybrid":
            h = port.hybrid or {}
            how = (f"hybrid: {len(h.get('outlined', []))} of {h.get('nests', 0)} loop nests as Kokkos kernels, "
                   f"{h.get('source')} stays Fortran; {how}")
        print(f"{k.name}: ported ({how}) -> {out / k.name}")
    return 1 if failed else 0
