"""Group the corpus routines that are not verified by the cause of the failure.

    PYTHONPATH=$PWD python bench/realcode/classify.py [--results bench/realcode/results_<date>.json]

Reads a ``results_<date>.json`` of ``run_corpus.py`` and writes ``FAILURES_<date>.md`` next to
it: each routine that is not verified falls in the first class (``CLASSES``, in order) whose
rule matches its status, reason code and reason text; per class the count (all routines and
those with loops), the codes it hits and up to three examples with file, line, routine and the
exact reason. ``call-to-unknown`` refusals are split by what the callee is, looked up in the
corpus' own routine count: a routine of another file of the same program, a Fortran intrinsic,
an MPI or OpenMP library routine, or nothing the program defines.

With ``--blockers`` (the default), every refused routine is translated again in this process
with port-fortran's rules (``translate_kernel``) to get *all* the reasons it is refused, not
only the first one the run recorded; the file then says, per class, how many refused
routines it blocks alone ("sole blocker": fixing that class alone would let them through the
translator).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus as cp  # noqa: E402

FORTRAN_INTRINSIC_SUBROUTINES = {
    "cpu_time", "date_and_time", "system_clock", "random_number", "random_seed", "get_command_argument",
    "get_command", "get_environment_variable", "execute_command_line", "mvbits", "move_alloc", "exit", "flush",
    "abort", "sleep", "getarg", "getenv", "etime", "dtime", "second", "time", "ctime", "fdate",
}


@dataclass
class Cls:
    key: str
    title: str
    rule: Callable[[dict], bool]
    todo: str  # what would fix it, for the team
    theme: str = ""  # the area of work it belongs to (THEMES)


THEMES = {
    "host": "Host-side work inside the routine (I/O, MPI, ALLOCATE, strings, timers, SAVE): outlining or hybrid mode",
    "hybrid": "Main programs and internal procedures are never kernels (hybrid mode, host association)",
    "frontend": "Front end: files or routines dropped, kinds misread (issue 20)",
    "harness": "Harness build: the original or its driver does not build or link (issues 12 and 20)",
    "program": "Program model across files: callees and names defined in other files (issue 12)",
    "translate": "Translator coverage: constructs refused inside the routine",
    "verify": "Verification: translated, not proven",
    "runner": "Tool or runner errors",
}


def _r(pattern: str) -> Callable[[dict], bool]:
    rx = re.compile(pattern, re.I | re.S)
    return lambda row: bool(rx.search(row.get("reason") or ""))


def _code(*codes: str) -> Callable[[dict], bool]:
    return lambda row: (row.get("reason_code") or "") in codes


def _st(status: str, *rules: Callable[[dict], bool]) -> Callable[[dict], bool]:
    return lambda row: row["status"] == status and all(r(row) for r in rules)


def _callee(row: dict) -> str:
    m = re.search(r"\[call-to-unknown\] '([^']+)'", row.get("reason") or "")
    return m.group(1).lower() if m else ""


def call_kind(row: dict, program_routines: dict[tuple[str, str], set[str]]) -> str:
    """What the callee of a call-to-unknown refusal is."""
    name = _callee(row)
    if not name:
        return "?"
    if name.startswith("mpi_") or name.startswith("pmpi_"):
        return "mpi"
    if name.startswith("omp_"):
        return "openmp"
    if name in FORTRAN_INTRINSIC_SUBROUTINES:
        return "intrinsic"
    names = program_routines.get((row["code"], row["unit"]), set())
    if name in names:
        return "other-file"
    if name in program_routines.get((row["code"], "*"), set()):
        return "other-unit"
    return "undefined"


_DOUBLE_DECL = re.compile(r"^\s*(real\s*\(\s*(kind\s*=\s*)?(?!4\s*\))[a-z_]\w*\s*\)|real\s*\*\s*8|double\s+precision"
                          r"|real\s*\(\s*(kind\s*=\s*)?8\s*\))", re.I | re.M)


def kind_mismatch(row: dict, src_root: Path, out_root: Path) -> bool:
    """The harness spec treats the routine's reals as float32 (tolerance rel 1e-05) while its
    source declares them double (named kind, real*8, double precision)."""
    spec = out_root / (row.get("port_dir") or "") / f"{row['routine']}.spec.yaml"
    if not row.get("port_dir") or not spec.is_file():
        return False
    if "rel: 1.0e-05" not in spec.read_text():
        return False
    src = src_root / row["code"] / row["file"]
    try:
        lines = src.read_text(errors="replace").split("\n")
    except OSError:
        return False
    body = "\n".join(lines[row["line"] - 1:(row.get("end_line") or row["line"])])
    return bool(_DOUBLE_DECL.search(body))


def _calls_outside(row: dict, files_of: dict[tuple[str, str], set[str]]) -> list[str]:
    """The kernel's CALL targets that its own file does not define."""
    return [c for c in row.get("calls") or [] if row["file"] not in files_of.get((row["code"], c), set())]


def make_classes(program_routines: dict[tuple[str, str], set[str]],
                 files_of: Optional[dict[tuple[str, str], set[str]]] = None) -> list[Cls]:
    files_of = files_of or {}
    ck = lambda kind: (lambda row: row.get("reason_code") == "call-to-unknown" and call_kind(row, program_routines) == kind)  # noqa: E731
    return [
        # ------------------------------------------------------------ lost: never seen as kernels
        Cls("lost-unnamed-main-drops-file", "File dropped: a main program without PROGRAM statement is 'not modelled', "
            "and every routine of the file is lost with it",
            _st("lost", _r(r"Main_Program0 at file level")),
            "Model the unnamed main program (issue 20 item 3); never drop the other units of the file."),
        Cls("lost-parse-nesting", "File dropped (or partly): 'expression nesting too deep for the parser'",
            _st("lost", _r(r"nesting too deep")),
            "Parse long expressions without recursion limits (issue 20 item 7)."),
        Cls("lost-parse-timeout", "File dropped: parse time limit", _st("lost", _code("parse-timeout")),
            "Linear-time parse and analysis (issue 20 item 7)."),
        Cls("lost-parse-other", "File dropped: other parse or read error", _st("lost", _r(r"^the file was not read")),
            "See the examples; each is a front-end gap."),
        Cls("lost-main-program", "Main program: not a kernel (hybrid mode needed)",
            _st("lost", _code("main-program", "unnamed-main-program")),
            "Hybrid translation of main programs (loops become Kokkos kernels, the program stays Fortran)."),
        Cls("lost-internal-procedure", "Internal procedure (CONTAINS in a program or routine): never a kernel",
            _st("lost", _code("internal-procedure")),
            "Internal procedures with host association (issue 20 item 3)."),
        Cls("lost-not-seen", "Not recorded by the tool, reason unknown", _st("lost"),
            "Investigate: the front end dropped a routine silently."),
        # ------------------------------------------------------------ error: the tool broke
        Cls("error-module-order", "Harness: the original cannot be compiled, a module of another file was not "
            "compiled first ('Cannot open module file')",
            _st("error", _r(r"Cannot open module file")),
            "Compile the tree's modules in dependency order for the reference and port drivers (issue 20 item 5)."),
        Cls("error-argument-mismatch", "Harness: the original does not compile with gfortran's defaults: legacy "
            "calls with argument type/rank mismatches (gfortran >= 10 needs -fallow-argument-mismatch)",
            _st("error", _r(r"compiling the original failed"), _r(r"(Type|Rank) mismatch")),
            "Fortran flags per tree (--fflags) and legacy defaults (issue 20 item 4); corpus.yaml lists the flags."),
        Cls("error-driver-line-length", "Harness: generated Fortran driver line longer than 132 columns",
            _st("error", _r(r"Line truncated|line-truncation|driver failed.*Syntax error in argument list")),
            "Wrap generated Fortran lines with '&' continuations (issue 12, class 3)."),
        Cls("error-link-whole-file", "Harness: link failed because the original's object is the whole file: "
            "the kernel calls nothing outside its file, but other routines of the file do ('undefined reference' "
            "from functions that are not the kernel)",
            _st("error", _r(r"undefined reference"), lambda row: not _calls_outside(row, files_of)),
            "Link only what the kernel needs: extract the routine (or its call closure) from the file, or link the "
            "objects of the whole tree with the library externals stubbed (issue 12, class 2)."),
        Cls("error-link-callee", "Harness: link failed, a routine the kernel itself calls is not linked "
            "('undefined reference')",
            _st("error", _r(r"undefined reference")),
            "Link the objects of every routine the kernel calls, transitively (issue 12, class 2)."),
        Cls("error-original-compile", "Harness: compiling the original failed (other than module order)",
            _st("error", _r(r"compiling the original failed")),
            "Compile the original with the tree's flags and defines (-D/-I, --fflags; issue 20 item 4)."),
        Cls("error-kernel-timeout", "Kernel ran past the corpus wall limit", _st("error", _code("kernel-timeout")),
            "Find where the time goes (build, inputs, a hang) for these kernels."),
        Cls("error-unit", "The unit's port-fortran run crashed or timed out",
            _st("error", _code("unit-run-failed", "unit-timeout")), "See the unit's run.log."),
        Cls("error-other", "Other tool errors", _st("error"), "See the examples."),
        # ------------------------------------------------------------ refused: calls
        Cls("refused-call-other-file", "Call to a routine defined in another file of the same program",
            _st("refused", ck("other-file")),
            "Program model across files (issue 12): resolve callees in the tree; link them in the harness."),
        Cls("refused-call-other-unit", "Call to a routine defined elsewhere in the code (another program's files)",
            _st("refused", ck("other-unit")), "As above; check the unit's files in corpus.yaml."),
        Cls("refused-call-intrinsic", "Call to a Fortran intrinsic subroutine read as an unknown routine "
            "(cpu_time, system_clock, random_number ...)",
            _st("refused", ck("intrinsic")), "Know the intrinsic subroutines; most are host-side (timers, RNG)."),
        Cls("refused-call-mpi", "Call to an MPI routine (a library the program links)", _st("refused", ck("mpi")),
            "Name it as external in the report; hybrid mode keeps it in Fortran."),
        Cls("refused-call-openmp", "Call to the OpenMP runtime library (omp_get_thread_num ...)",
            _st("refused", ck("openmp")), "Map omp_* queries or keep them host-side."),
        Cls("refused-call-undefined", "Call to a name the program does not define as a routine "
            "(C function, array or statement function of another scope misread as a call)",
            _st("refused", ck("undefined")),
            "Symbol table across files: a module array used like a function is an array (issue 20 item 6); "
            "C routines are external."),
        # ------------------------------------------------------------ refused: data the kernel reaches
        Cls("refused-derived-type", "Derived-type component references", _st("refused", _code("derived-type")),
            "Derived types (flatten components the kernel touches into arguments, or hybrid mode)."),
        Cls("refused-module-variable", "Module variables used by the kernel", _st("refused", _code("module-variable")),
            "Pass module state as arguments / outline (hybrid issue)."),
        Cls("refused-unknown-name", "A name not declared in the kernel (from a module of another file, or "
            "host association)", _st("refused", _code("unknown-name")),
            "Program model: names from used modules of other files."),
        Cls("refused-assumed-shape", "Assumed-shape or allocatable dummy arguments",
            _st("refused", _code("assumed-shape", "allocatable")), "Array descriptors through bind(C) (CFI) or "
                                                                  "explicit-shape wrappers."),
        Cls("refused-common", "COMMON blocks / SAVE variables", _st("refused", _code("common-block", "save-variable")),
            "See the examples."),
        Cls("refused-io", "I/O statements inside the routine (WRITE, PRINT, READ, OPEN)",
            _st("refused", _code("io-in-kernel")), "Outline I/O into generated Fortran (translation issue)."),
        Cls("refused-allocate", "ALLOCATE / DEALLOCATE inside the routine",
            _st("refused", _code("unsupported-construct"), _r(r"ALLOCATE inside a kernel")),
            "Host-side allocation (hybrid mode)."),
        Cls("refused-statement-function", "Statement functions", _st("refused", _r(r"statement function")),
            "Inline statement functions (they are pure expressions)."),
        Cls("refused-implicit-save", "Initialised local variables (implicit SAVE)",
            _st("refused", _r(r"implicit SAVE")), "Model implicit SAVE (state kept between calls) or hybrid mode."),
        Cls("refused-character", "CHARACTER data: substrings, arguments longer than one character",
            _st("refused", _r(r"character substring|CHARACTER argument")), "Host-side string handling."),
        Cls("refused-equivalence", "EQUIVALENCE in the routine or in a file it INCLUDEs",
            _st("refused", _code("equivalence")),
            "Model EQUIVALENCE of names the kernel does not touch as irrelevant; alias the rest (one storage)."),
        Cls("refused-impure-call", "Call to a routine of the same file that cannot become a device function "
            "(it takes an array argument, or does I/O)", _st("refused", _code("impure-call")),
            "Device functions with array (view) arguments, or keep the call on the host (hybrid mode)."),
        Cls("refused-intrinsic", "Intrinsic used in a way the translator does not support",
            _st("refused", _code("unsupported-intrinsic")), "See the examples."),
        Cls("refused-pointer", "Pointers", _st("refused", _code("pointer")), "See the examples."),
        Cls("refused-loop-analysis", "Loop structure the translator refuses (variable-step DO, loop variable "
            "used after the loop, GOTO out of loops ...)",
            _st("refused", _code("unsupported-loop", "loop-variable-modified", "early-exit", "goto", "unstructured",
                                  "unstructured-goto")), "Flow-sensitive analysis (issue 12, class 6)."),
        Cls("refused-unknown-extent", "Assumed-size dummies without an extent", _st("refused", _code("unknown-extent")),
            "Extents from call sites / configuration (issue 12, class 7)."),
        Cls("refused-proof-budget", "The proof would pass the kernel's time budget (limits.proof_s): the "
            "original is slow on the inputs it takes", _st("refused", _code("proof-over-budget")),
            "Smaller proof inputs where the extents are compile-time constants; fewer runs of a slow original."),
        Cls("refused-other-construct", "Other constructs not modelled", _st("refused", _code("unsupported-construct")),
            "See the examples."),
        Cls("refused-other", "Other refusals", _st("refused"), "See the examples."),
        # ------------------------------------------------------------ failed: translated, not proven
        Cls("failed-kind-real4", "Kinds misread: the routine declares double precision through a named kind "
            "(real(kind=REAL64), real(dp), real*8 ...) and the harness treats it as real(4): the original aborts or "
            "returns garbage on single-precision data", lambda row: row["status"] == "failed" and row.get("_kind_mismatch"),
            "Resolve kinds like a compiler (iso_fortran_env, kind(), selected_real_kind, module parameters; "
            "issue 20 item 1)."),
        Cls("failed-empty-bounds", "Inputs contradict the kernel: bound pairs with upper < lower, so outputs are "
            "empty and 'shape differs'", _st("failed", _r(r"shape differs")),
            "Infer lower <= upper constraints; zero-size outputs compare equal (issue 12, class 4)."),
        Cls("failed-not-finite", "The original returns inf/NaN on the generated inputs",
            _st("failed", _r(r"\bnan\b|\binf\b|not finite")),
            "Run the original first and redraw inputs (issue 12, class 4)."),
        Cls("failed-hard-coded", "Anti-fraud check: 'hard-coded output' on literals of the original",
            _st("failed", _r(r"hard-coded")), "Compare against the original's own literals (issue 20 item 2)."),
        Cls("failed-other", "Other failures (wrong results, builds)", _st("failed"), "See the examples."),
    ]


THEME_OF = {
    "lost-unnamed-main-drops-file": "frontend", "lost-parse-nesting": "frontend", "lost-parse-timeout": "frontend",
    "lost-parse-other": "frontend", "lost-not-seen": "frontend", "failed-kind-real4": "frontend",
    "lost-main-program": "hybrid", "lost-internal-procedure": "hybrid",
    "error-module-order": "harness", "error-argument-mismatch": "harness", "error-driver-line-length": "harness",
    "error-link-whole-file": "harness", "error-link-callee": "harness", "error-original-compile": "harness",
    "error-kernel-timeout": "runner", "error-unit": "runner", "error-other": "runner",
    "refused-call-other-file": "program", "refused-call-other-unit": "program", "refused-call-undefined": "program",
    "refused-unknown-name": "program", "refused-module-variable": "program",
    "refused-call-intrinsic": "host", "refused-call-mpi": "host", "refused-call-openmp": "host", "refused-io": "host",
    "refused-allocate": "host", "refused-implicit-save": "host", "refused-character": "host",
    "failed-empty-bounds": "verify", "failed-not-finite": "verify", "failed-hard-coded": "verify",
    "failed-other": "verify", "refused-proof-budget": "verify",
}


def with_themes(classes: list[Cls]) -> list[Cls]:
    for c in classes:
        c.theme = THEME_OF.get(c.key, "translate")
    return classes


def classify(rows: list[dict], classes: list[Cls]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["status"] == "verified":
            continue
        for c in classes:
            if c.rule(r):
                out[c.key].append(r)
                break
        else:
            out["unclassified"].append(r)
    return out


def program_routine_names(rows: list[dict]) -> dict[tuple[str, str], set[str]]:
    """Routine names per (code, unit) and per (code, '*'), from the corpus rows; a unit's
    program includes its context files, whose routines are rows of the units that own them:
    so a unit's names are every routine of the code's units that share a file with it, and
    the code-wide set covers the rest."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        out[(r["code"], r["unit"])].add(r["routine"])
        out[(r["code"], "*")].add(r["routine"])
    return out


def add_context_names(names: dict[tuple[str, str], set[str]], rows: list[dict]) -> None:
    """Add to each unit the routines of its context files (from corpus.yaml), which are rows
    of other units."""
    by_file: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        by_file[(r["code"], r["file"])].add(r["routine"])
    try:
        codes = cp.load()
    except cp.CorpusError:
        return
    for c in codes:
        for u in c.units:
            for g in u.context:
                for (code, f), ns in by_file.items():
                    if code == c.name and cp.glob_match(f, g):
                        names[(c.name, u.name)] |= ns


# ----------------------------------------------------------------------------- all blockers


def all_blockers(rows: list[dict], src_root: Path) -> dict[tuple[str, str, str, str], list[dict]]:
    """For every refused row, all the reasons the rules refuse it (translate_kernel in this
    process, the unit's -I/-D). Key (code, unit, file, routine) -> [{code, message, line}]."""
    from port_fortran.fortran import parse_file
    from port_fortran.records import TranslationRefused
    from port_fortran.translate import translate_kernel

    codes = {c.name: c for c in cp.load()}
    wanted: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in rows:
        if r["status"] == "refused":
            wanted[(r["code"], r["unit"], r["file"])].append(r)
    out: dict[tuple[str, str, str, str], list[dict]] = {}
    for (code_name, unit_name, f), rs in sorted(wanted.items()):
        code = codes[code_name]
        unit = code.unit(unit_name)
        path = cp.code_root(src_root, code) / f
        defines = {k: ("1" if v is None else v) for k, v in cp.unit_defines(code, unit).items()}
        sf = parse_file(path, include_dirs=[str(d) for d in cp.include_dirs(code, src_root)], defines=defines)
        kernels = {k.name: k for k in sf.kernels}
        for r in rs:
            k = kernels.get(r["routine"])
            if k is None:
                continue
            try:
                translate_kernel(k, sf)
                diags = []
            except TranslationRefused as exc:
                diags = [{"code": d.code, "message": d.message, "line": d.line} for d in exc.diagnostics]
            except Exception as exc:  # a translator bug on this kernel: shown, not hidden
                diags = [{"code": "translator-exception", "message": f"{type(exc).__name__}: {exc}", "line": 0}]
            out[(code_name, unit_name, f, r["routine"])] = diags
    return out


def loop_verdicts(rows: list[dict], src_root: Path) -> dict[tuple[str, str, str, str], list[dict]]:
    """For every routine the front end sees as a kernel: its loops (every nesting level) with
    the dependence verdict, from port-fortran's own IR. Key (code, unit, file, routine) ->
    [{line, parallel, depth, codes: [...], first: message}]."""
    from port_fortran.fortran import ir, parse_file

    codes = {c.name: c for c in cp.load()}
    files: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for r in rows:
        files[(r["code"], r["unit"], r["file"])].append(r)
    out: dict[tuple[str, str, str, str], list[dict]] = {}

    def walk(body, depth, acc):
        for st in body:
            if isinstance(st, ir.Do):
                info = st.info
                msgs: dict[str, str] = {}
                for d in info.reasons:
                    msgs.setdefault(d.code, str(d.message))
                acc.append({"line": st.line, "parallel": info.parallel, "depth": depth, "codes": list(msgs),
                            "msgs": msgs, "first": str(info.reasons[0].message) if info.reasons else ""})
                walk(st.body, depth + 1, acc)
            else:
                walk(ir.children(st), depth, acc)

    for (code_name, unit_name, f), rs in sorted(files.items()):
        code = codes[code_name]
        unit = code.unit(unit_name)
        defines = {k: ("1" if v is None else v) for k, v in cp.unit_defines(code, unit).items()}
        sf = parse_file(cp.code_root(src_root, code) / f, include_dirs=[str(d) for d in cp.include_dirs(code, src_root)],
                        defines=defines)
        for k in sf.kernels:
            acc: list[dict] = []
            walk(k.body, 0, acc)
            out[(code_name, unit_name, f, k.name)] = acc
    return out


def render_loops(rows: list[dict], loops: dict) -> list[str]:
    """Why loops stay serial: over every loop of every kernel the front end sees, and for the
    verified routines whose port has no parallel loop."""
    all_loops = [(key, lp) for key, lps in loops.items() for lp in lps]
    outer = [(k, lp) for k, lp in all_loops if lp["depth"] == 0]
    ser = [(k, lp) for k, lp in outer if not lp["parallel"]]
    by_code: Counter = Counter()
    ex: dict[str, tuple] = {}
    for k, lp in ser:
        for c in lp["codes"] or ["?"]:
            by_code[c] += 1
            ex.setdefault(c, (k, lp))
    out = ["## Why loops stay serial (dependence analysis)", "",
           f"Over the {len(loops)} routines the front end takes as kernels (whatever happened to them later): "
           f"{len(all_loops)} DO loops, {len(outer)} outermost; {len(outer) - len(ser)} outermost loops parallel, "
           f"{len(ser)} serial. Reason codes of the serial outermost loops (a loop can have several):", "",
           "| reason | outermost loops | example |", "|---|---:|---|"]
    for c, n in by_code.most_common():
        (code, unit, f, name), lp = ex[c]
        out.append(f"| `{c}` | {n} | `{code}/{f}:{lp['line']}` {name}: {lp['msgs'].get(c, '')[:160]} |")
    vs = [r for r in rows if r["status"] == "verified" and r["has_loops"] and not r["parallel"]]
    if vs:
        out += ["", f"Verified routines with loops whose port has no parallel pattern ({len(vs)}):", ""]
        for r in vs:
            lps = loops.get((r["code"], r["unit"], r["file"], r["routine"]), [])
            cs = Counter(c for lp in lps if not lp["parallel"] for c in lp["codes"])
            first = next((lp for lp in lps if not lp["parallel"] and lp["codes"]), None)
            why = f"; first: line {first['line']}: {first['first'][:200]}" if first else ""
            out.append(f"- `{r['code']}/{r['file']}:{r['line']}` {r['routine']}: serial loops' reasons "
                       + ", ".join(f"`{c}` {n}" for c, n in cs.most_common()) + why)
    out.append("")
    return out


def blocker_classes(row: dict, diags: list[dict], classes: list[Cls]) -> list[str]:
    keys = []
    for d in diags:
        pseudo = dict(row, status="refused", reason_code=d["code"], reason=f"[{d['code']}] {d['message']}")
        for c in classes:
            if c.rule(pseudo):
                if c.key not in keys:
                    keys.append(c.key)
                break
    return keys


# ----------------------------------------------------------------------------- report


def _ex(r: dict) -> str:
    reason = re.sub(r"\s+", " ", r.get("reason") or "").strip()
    if len(reason) > 320:
        reason = reason[:320] + " ..."
    return f"`{r['code']}/{r['file']}:{r['line']}` {r['routine']} ({r['kind']}): {reason}"


def _examples(rs: list[dict], n: int = 3) -> list[dict]:
    """Up to n examples from different codes, then different files."""
    out: list[dict] = []
    for key in ("code", "file"):
        for r in rs:
            if len(out) >= n:
                return out
            if r not in out and all(r[key] != o[key] for o in out):
                out.append(r)
    for r in rs:
        if len(out) >= n:
            break
        if r not in out:
            out.append(r)
    return out


def render(results: dict, groups: dict[str, list[dict]], classes: list[Cls],
           blockers: Optional[dict] = None, blocker_sets: Optional[dict] = None,
           loop_data: Optional[dict] = None) -> str:
    rows = results["rows"]
    total = len(rows)
    loops = sum(1 for r in rows if r["has_loops"])
    not_ver = [r for r in rows if r["status"] != "verified"]
    codes = list(dict.fromkeys(r["code"] for r in rows))
    out = [f"# Why corpus routines are not verified ({results['date']})", "",
           f"From `results_{results['date']}.json` ({results['command']}; tool {results['tool_commit']}). "
           f"{total} routines ({loops} with loops); {len(not_ver)} not verified "
           f"({sum(1 for r in not_ver if r['has_loops'])} with loops). Each routine that is not verified is in "
           "exactly one class: the first whose rule matches its status and the reason the run recorded "
           "(the tool records one reason per routine, the first it meets). Written by "
           "`bench/realcode/classify.py`; the rules are in that file.", ""]
    by_theme: dict[str, list[dict]] = defaultdict(list)
    theme_of = {c.key: c.theme for c in classes}
    for key, rs in groups.items():
        by_theme[theme_of.get(key, "translate")] += rs
    out += ["## Summary by area of work", "",
            "| area | routines | with loops | classes (routines) |", "|---|---:|---:|---|"]
    for th, rs in sorted(by_theme.items(), key=lambda kv: -len(kv[1])):
        ks = Counter(k for k, g in groups.items() for _ in g if theme_of.get(k, "translate") == th)
        out.append(f"| {THEMES.get(th, th)} | {len(rs)} | {sum(1 for r in rs if r['has_loops'])} | "
                   + ", ".join(f"`{k}` {n}" for k, n in ks.most_common()) + " |")
    out.append("")
    out += ["## Classes", "", "| # | class | status | routines | with loops | " + " | ".join(codes) + " |",
            "|---:|---|---|---:|---:|" + "---:|" * len(codes)]
    order = [c for c in classes if groups.get(c.key)] + ([Cls("unclassified", "Unclassified", lambda r: True, "")]
                                                          if groups.get("unclassified") else [])
    order.sort(key=lambda c: -len(groups[c.key]))
    for i, c in enumerate(order, 1):
        rs = groups[c.key]
        by = Counter(r["code"] for r in rs)
        st = "/".join(sorted({r["status"] for r in rs}))
        out.append(f"| {i} | {c.title} (`{c.key}`) | {st} | {len(rs)} | {sum(1 for r in rs if r['has_loops'])} | "
                   + " | ".join(str(by.get(k, "")) for k in codes) + " |")
    if blockers is not None and blocker_sets is not None:
        out += ["", "## Refused routines: every reason, not only the first", "",
                f"The {len(blocker_sets)} refused routines were translated again in-process (`translate_kernel`) "
                "to collect all the reasons the rules refuse each one. `sole`: the routines this class alone "
                "blocks (fix it and they pass the translator, to meet the harness next); `any`: the routines "
                "it blocks among others.", "",
                "| class | sole | sole, with loops | any |", "|---|---:|---:|---:|"]
        any_c: Counter = Counter()
        sole: Counter = Counter()
        sole_loops: Counter = Counter()
        for key, (row, ks) in blocker_sets.items():
            for k in ks:
                any_c[k] += 1
            if len(ks) == 1:
                sole[ks[0]] += 1
                sole_loops[ks[0]] += bool(row["has_loops"])
        titles = {c.key: c.title for c in classes}
        for k, n in any_c.most_common():
            out.append(f"| {titles.get(k, k)} (`{k}`) | {sole.get(k, 0)} | {sole_loops.get(k, 0)} | {n} |")
        nb = Counter(len(ks) for _, ks in blocker_sets.values())
        out += ["", "Number of distinct blocking classes per refused routine: "
                + ", ".join(f"{n} class{'es' if n != 1 else ''}: {c}" for n, c in sorted(nb.items())) + "."]
    if blockers is not None:
        out += ["", "Caveat: the translator reports every kernel-level reason at once (constructs, module "
                "variables, I/O, types), but stops at the first refusal it meets while translating the body "
                "(calls, loop shapes, extents); for those classes `sole` is an upper bound."]
    if loop_data is not None:
        out += [""] + render_loops(rows, loop_data)
    out += ["", "## Each class, with examples", ""]
    for i, c in enumerate(order, 1):
        rs = groups[c.key]
        codes_hit = Counter(r["reason_code"] or "-" for r in rs)
        out += [f"### {i}. {c.title}", "",
                f"`{c.key}`: {len(rs)} routines ({sum(1 for r in rs if r['has_loops'])} with loops); reason codes: "
                + ", ".join(f"`{k}` {n}" for k, n in codes_hit.most_common()) + "."]
        if c.todo:
            out.append(f"Fix: {c.todo}")
        out.append("")
        for r in _examples(rs):
            out.append(f"- {_ex(r)}")
        if c.key.startswith("refused-call"):
            callees = Counter(_callee(r) for r in rs)
            out.append("- callees: " + ", ".join(f"`{k}` {n}" for k, n in callees.most_common(12)))
        out.append("")
    return "\n".join(out)


PREFACE_START, PREFACE_END = "<!-- written by hand: kept when the file is generated again -->", "<!-- end -->"


def keep_preface(text: str, old_path: Path) -> str:
    """Carry the hand-written reading of the numbers (between the markers) of an existing
    file into the newly generated one, right after its first paragraph."""
    if not old_path.is_file():
        return text
    old = old_path.read_text()
    i, j = old.find(PREFACE_START), old.find(PREFACE_END)
    if i < 0 or j < i:
        return text
    block = old[i:j + len(PREFACE_END)]
    head, sep, rest = text.partition("\n## ")
    return f"{head}\n{block}\n{sep}{rest}" if sep else text + "\n" + block


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", type=Path, default=None, help="results_<date>.json (default: the newest)")
    ap.add_argument("--src", type=Path, default=cp.HERE / "src")
    ap.add_argument("--out", type=Path, default=None, help="default: FAILURES_<date>.md beside the results")
    ap.add_argument("--no-blockers", action="store_true", help="skip re-translating refused routines")
    args = ap.parse_args(argv)
    res_path = args.results or max(cp.HERE.glob("results_*.json"), default=None)
    if res_path is None or not Path(res_path).is_file():
        print("classify.py: error: no results_<date>.json; run run_corpus.py first", file=sys.stderr)
        return 2
    results = json.loads(Path(res_path).read_text())
    rows = results["rows"]
    out_root = cp.HERE / "out"
    for r in rows:
        if r["status"] == "failed":
            r["_kind_mismatch"] = kind_mismatch(r, args.src, out_root)
    names = program_routine_names(rows)
    add_context_names(names, rows)
    files_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in rows:
        files_of[(r["code"], r["routine"])].add(r["file"])
    classes = with_themes(make_classes(names, files_of))
    groups = classify(rows, classes)
    blockers = blocker_sets = None
    if not args.no_blockers:
        blockers = all_blockers(rows, args.src)
        blocker_sets = {}
        for r in rows:
            key = (r["code"], r["unit"], r["file"], r["routine"])
            if key in blockers:
                blocker_sets[key] = (r, blocker_classes(r, blockers[key], classes))
    loops = None if args.no_blockers else loop_verdicts(rows, args.src)
    text = render(results, groups, classes, blockers, blocker_sets, loops)
    out = args.out or Path(res_path).with_name(f"FAILURES_{results['date']}.md")
    text = keep_preface(text, out)
    out.write_text(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
