"""``port-fortran verify DIR`` and ``port-fortran bench DIR`` on a port directory written
earlier: ``DIR/port.json`` says which file and kernel it came from (and the include dirs
and defines); the original is parsed again and the harness rebuilt from it."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import UserError
from ..records import BACKENDS
from .timing import proof_text


def load_harness(port_dir: str, **kw):
    from .hybrid import make_harness

    kernel, sf, meta, prog = load_port_meta(port_dir)
    if prog is not None:
        kw["program"] = prog
    return make_harness(kernel, sf, Path(port_dir), include_dirs=meta.get("include_dirs", []),
                        defines=meta.get("defines", {}), fflags=meta.get("fflags", []),
                        module_search=meta.get("module_search", []), **kw)


def load_port_meta(port_dir):
    """(kernel IR, source file IR, port.json, program model or None) of a port directory
    written by a run: the original named in ``port.json`` is parsed again with its include
    dirs and defines, through the run's program model when it was ported as part of one."""
    from ..fortran import parse_file

    d = Path(port_dir)
    meta_path = d / "port.json"
    if not meta_path.is_file():
        raise UserError(f"{meta_path}: not found; {d} is not a port directory written by port-fortran "
                        f"(expected <out>/<file>/<kernel>/ with port.json)")
    try:
        meta = json.loads(meta_path.read_text())
        source, name = meta["source"], meta["kernel"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise UserError(f"{meta_path}: unreadable ({exc}); write it again by re-running the port") from None
    if not Path(source).is_file():
        raise UserError(f"{meta_path}: the original source {source} no longer exists; restore it or port again")
    prog_path = meta.get("program")
    if prog_path and Path(prog_path).is_file():  # ported as part of a program: callees, modules, extents
        from ..fortran.program import load_program

        prog = load_program(prog_path)
        if prog.has_file(source):
            from ..fortran.effects import load_for_port  # as the run's stages loaded it
            kernel, sf = load_for_port(prog, source, name)
            return kernel, sf, meta, prog
    sf = parse_file(source, include_dirs=meta.get("include_dirs", []), defines=meta.get("defines", {}),
                    module_search=meta.get("module_search") or None, fflags=meta.get("fflags") or ())
    kernel = next((k for k in sf.kernels if k.name == name), None)
    if kernel is None:
        errs = "; ".join(str(e) for e in sf.errors[:3])
        raise UserError(f"{source}: kernel {name!r} not found any more" + (f" ({errs})" if errs else ""))
    return kernel, sf, meta, None


def _backends(text: str) -> list[str]:
    out = [b.strip() for b in text.split(",") if b.strip()]
    for b in out:
        if b not in BACKENDS:
            raise UserError(f"--backends: unknown backend {b!r} (choose from {', '.join(BACKENDS)})")
    return out


def cmd_verify(args) -> int:
    h = load_harness(args.port_dir)
    backends = _backends(args.backends)
    spec = h.spec
    if spec.edited:
        print(f"using the edited spec {h.spec_path}")
    ok = True
    for b in backends:
        v = h.verify(b, seeds=args.seeds)
        cases = len(v.cases)
        if v.passed:
            worst = max((o.max_rel_err for c in v.cases for o in c.outputs), default=0.0)
            print(f"{h.kernel.name} [{b}] verified: {cases} input sets "
                  f"(seeds {v.cases[0].seed}..., sizes {_sizes(v)}), max rel err {worst:.2g}")
        else:
            ok = False
            print(f"{h.kernel.name} [{b}] NOT verified: {v.reason}")
        for n in v.notes:
            print(f"  {n}")
        if v.passed and getattr(args, "timing_size", False):
            pv = h.prove_timing(b)
            ok = ok and pv.passed
            print(f"{h.kernel.name} [{b}] " + (proof_text(pv) if pv.passed else f"NOT verified: {pv.reason}"))
    return 0 if ok else 1


def _sizes(v) -> str:
    seen = []
    for c in v.cases:
        s = ",".join(f"{k}={x}" for k, x in c.sizes.items()) + (f" [{c.kind}]" if c.kind else "")
        if s not in seen:
            seen.append(s)
    if len(seen) > 5:  # the first ones and the last (the boundary-crossing case comes last)
        return "; ".join(seen[:4]) + " ... " + seen[-1]
    return "; ".join(seen)


def cmd_bench(args) -> int:
    h = load_harness(args.port_dir)
    backends = _backends(args.backends)
    timings = h.bench(backends, threads=args.threads, repeats=args.repeats)
    print(format_table(timings))
    for t in timings:
        if t.proven_sizes is not None and t.kernel_only:
            print(f"{t.variant}: {t.proof}")
    for n in getattr(h, "bench_notes", []):
        print(f"note: {n}", file=sys.stderr)
    return 0 if timings else 1


def format_table(timings) -> str:
    rows = ["| variant | threads | kernel only | sizes | proven | median s | spread s | GB/s | GFLOP/s | of bandwidth |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for t in timings:
        rows.append(f"| {t.variant} | {t.threads} | {'yes' if t.kernel_only else 'with copies'} | "
                    f"{','.join(f'{k}={v}' for k, v in t.sizes.items())} | {proven_label(t)} | "
                    f"{t.median_s:.4g} | {t.spread_s:.2g} | {_f(t.gbytes_per_s)} | {_f(t.gflops)} | "
                    f"{'' if t.roofline_fraction is None else f'{100 * t.roofline_fraction:.0f}%'} |")
    return "\n".join(rows)


def proven_label(t) -> str:
    """'yes' when the timed build was verified at the timed sizes on that backend,
    'reference' for the original Fortran, 'NO' otherwise (never the case for a timing
    `bench` made: it times only proven builds)."""
    if str(t.variant).startswith("fortran-"):
        return "reference"
    return "yes" if t.proven_sizes is not None and dict(t.proven_sizes) == dict(t.sizes) else "NO"


def _f(x) -> str:
    return "" if x is None else f"{x:.3g}"
