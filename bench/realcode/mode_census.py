"""What the translator makes of every routine of the corpus, without building anything:
per routine the mode (``full``/``hybrid``), the number of nests a hybrid port outlines, the
port's parallel patterns and a digest of the sources it generates, or the refusal code
(``translate_mode(..., 'auto')`` over the unit read as one program).

A change that leaves this census unchanged for a code leaves that code's translations
unchanged: its corpus rows can only move through the harness (inputs, proofs). Each routine
also carries a digest of the input spec the harness infers for it (``harness.infer``,
printed as the spec file would be, the COMMON members it drives included): a change of what
the harness draws moves it too. Compare two versions of the tool by running this with each
on PYTHONPATH (a ``git worktree`` of the older commit), then ``--diff``:

    PYTHONPATH=/tmp/old /work/main/.venv/bin/python bench/realcode/mode_census.py --json /tmp/before.json
    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/realcode/mode_census.py --json /tmp/after.json
    python bench/realcode/mode_census.py --diff /tmp/before.json /tmp/after.json

About 3 minutes for the whole corpus on the 2-core machine.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = {"pf_kokkos_compat.hpp", "pf_strings.hpp", "pf_runtime.hpp"}
sys.path.insert(0, str(HERE))

import corpus as C  # noqa: E402


def census(src: Path, names=None) -> dict[str, list]:
    from port_fortran.fortran import ir
    from port_fortran.records import TranslationRefused
    from port_fortran.translate.hybrid import translate_mode

    out: dict[str, list] = {}
    for code, unit, mine, prog in C.read_units(src, names):
        if isinstance(prog, Exception):
            out[f"{code.name}/{unit.name}"] = ["unit-failed", f"{type(prog).__name__}: {prog}"[:200]]
            continue
        for r in prog.all_routines():
            k = prog.kernel_of(r)
            if r.file not in mine or not isinstance(k, ir.Kernel) or getattr(k, "host", None):
                continue
            key = f"{code.name}/{unit.name}:{Path(r.file).name}:{k.name}"
            try:
                p = translate_mode(k, prog.file(r.file), None, "auto", program=prog)
                # the patterns too: an analysis change can make a port more parallel without
                # changing its mode
                # and a digest of the sources generated for it: a change of the code made (host
                # loops, say) moves a routine even when its mode and patterns stay. The headers
                # every port carries alike (the compat header, the string and call-count
                # runtimes) are left out: a change there is one for all ports, judged on its own
                digest = hashlib.sha1("".join(f"{n}\0{t}\0" for n, t in sorted((p.files or {}).items())
                                              if n not in SHARED).encode()).hexdigest()[:12]
                out[key] = [p.mode, len(p.hybrid["outlined"]) if p.hybrid else 0, sorted(p.patterns or []), digest,
                            _spec_digest(prog, r.file, k)]
            except TranslationRefused as exc:
                out[key] = ["refused", exc.diagnostics[0].code]
            except Exception as exc:  # a tool bug: named, the census goes on
                out[key] = ["exception", f"{type(exc).__name__}: {exc}"[:200]]
    return out


def _driven(k, prog):
    """``k`` as the harness drives it: the COMMON members it draws as extra arguments (its
    own, and where the tool has ``harness.callee_commons`` those only its callees touch)
    and the conditions its inputs must not meet (``accepts``, with its callees' checks where
    the tool has ``callee_state``)."""
    from port_fortran.harness.members import driven_kernel
    try:
        from port_fortran.harness.callee_commons import callee_state
    except ImportError:  # an older tool (a census of an earlier commit)
        try:
            from port_fortran.harness.callee_commons import callee_commons
        except ImportError:
            return driven_kernel(k)
        return driven_kernel(k, (), callee_commons(k, prog.resolver()))
    return callee_state(k, prog.resolver())


def _spec_digest(prog, file, k) -> str:
    """A digest of the spec the harness infers for ``k`` (the text of its spec file) and of
    the conditions its draws keep false (``accepts``, and the linear constraints drawn from
    them), ``k`` loaded as the harness loads it
    (``effects.load_for_port``: the error exits of its callees, the comparisons they make on
    what it passes them) and driven as the harness drives it (``_driven``)."""
    from port_fortran.fortran.effects import load_for_port
    from port_fortran.fortran.render import expr_str
    from port_fortran.harness.constraints import constraints
    from port_fortran.harness.infer import infer
    from port_fortran.harness.spec import dump
    try:
        k = _driven(load_for_port(prog, file, k.name)[0], prog)
        text = dump(infer(k), k) + "".join(sorted(f"\n{expr_str(c)}" for c, *_ in k.accepts))
        text += "".join(sorted(f"\n{c.text}" for c in constraints(k) if c.kind == "accepts"))
    except Exception as exc:  # the harness would say so for this routine: recorded, not fatal
        return f"spec-error: {type(exc).__name__}"
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def diff(before: dict, after: dict) -> list[str]:
    return [f"{k}: {before.get(k)} -> {after.get(k)}" for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=HERE / "src")
    ap.add_argument("--codes", help="comma-separated code names (default: all)")
    ap.add_argument("--json", type=Path, help="write the census here")
    ap.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                    help="compare two censuses written with --json")
    args = ap.parse_args()
    if args.diff:
        lines = diff(json.loads(args.diff[0].read_text()), json.loads(args.diff[1].read_text()))
        print("\n".join(lines) or "no routine changed")
        return 0
    data = census(args.src, args.codes.split(",") if args.codes else None)
    if args.json:
        args.json.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    modes: dict[str, int] = {}
    for v in data.values():
        modes[v[0]] = modes.get(v[0], 0) + 1
    print(json.dumps({"routines": len(data), "by mode": modes}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
