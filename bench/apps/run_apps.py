"""Whole applications modernised by `port-fortran app`, timed original against modern.

    python bench/apps/run_apps.py                                    # serial, openmp; all apps
    python bench/apps/run_apps.py --apps heat77,wave90 --size small
    python bench/apps/run_apps.py --backends serial,openmp,cuda --kokkos-root /opt/kokkos-cuda

For each application it runs the command users run,

    port-fortran app ROOT --build CMD --run CMD --check REGEX --ignore REGEX ... \
        --backends B --out OUT/<app> --repeat N

which builds the original through the compiler wrapper, ports the routines it is built
from, builds and runs the modern tree per backend and compares its output with the
original's (docs/app.md); then it reads ``OUT/<app>/application.json`` and writes one table
row: the original's time serial and with OpenMP (where its build uses OpenMP), the modern
program's per backend (on CUDA with residency and, from the same build, without:
``PF_RESIDENT=0``), whether each matched, what was ported and kept.

Applications:

* the project's own (``fortran_kernels/apps/``: heat77, md, wave90), each with its
  ``port-fortran-app.yaml``; ``--size large`` runs its ``large_run`` (the timing case);
* public codes of the real-code corpus (``bench/realcode/src/<code>``, materialised by
  ``python bench/realcode/get.py``; never committed): ParRes (the stencil and transpose
  programs of its FORTRAN/ Makefile, self-check "Solution validates"), STREAM (stream.f
  and its Makefile, self-check "Solution Validates") and SNAP (its Makefile's serial OpenMP
  build, "Success! Done in a SNAP!", its output file compared). Each is copied to
  ``OUT/src/<app>`` first; what its build needs and the corpus does not hold is written there
  by this script (ParRes: ``common/make.defs`` naming gfortran; STREAM: a ``mysecond.c``
  timer; SNAP: its input files).

The table goes to ``--results`` (default ``bench/apps/results_<date>.md``) with the exact
command, the host, and the load average while it ran.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SAMPLES = REPO / "fortran_kernels" / "apps"
CORPUS_SRC = REPO / "bench" / "realcode" / "src"

PARRES_DEFS = """\
# written by bench/apps/run_apps.py: gfortran, as make.defs.gcc names it (without its -mtune=native)
FC=gfortran -std=f2018 -cpp
DEFAULT_OPT_FLAGS=-O3
OPENMPFLAG=-fopenmp
"""

MYSECOND_C = """\
/* written by bench/apps/run_apps.py: wall-clock seconds for stream.f (its Makefile builds
   mysecond.c beside it; the corpus fetches the Fortran only). */
#include <sys/time.h>
double mysecond_(void) {
  struct timeval tp;
  gettimeofday(&tp, 0);
  return (double)tp.tv_sec + (double)tp.tv_usec * 1.e-6;
}
double mysecond(void) { return mysecond_(); }
"""


def _parres(dest: Path) -> None:
    (dest / "common" / "make.defs").write_text(PARRES_DEFS)


def _stream(dest: Path) -> None:
    if not (dest / "mysecond.c").is_file():
        (dest / "mysecond.c").write_text(MYSECOND_C)


SNAP_INPUT = """\
! SNAP input written by bench/apps/run_apps.py (one rank; {what})
 &invar
  nthreads=1
  nnested=1
  npey=1
  npez=1
  ndimen=3
  nx={n}
  lx={l}
  ny={n}
  ly={l}
  nz={n}
  lz={l}
  ichunk={chunk}
  nmom=2
  nang={nang}
  ng={ng}
  mat_opt=1
  src_opt=1
  timedep=0
  it_det=0
  tf=1.0
  nsteps=1
  iitm=5
  oitm=20
  epsi=1.E-4
  fluxp=0
  scatp=0
  fixup=1
  soloutp=1
  kplane=0
  popout=0
  swp_typ=0
  multiswp=0
  angcpy=1
 /
"""


def _snap(dest: Path) -> None:
    (dest / "snap.in").write_text(SNAP_INPUT.format(what="the test case", n=6, l=0.6, chunk=3, nang=6, ng=4))
    (dest / "snap-large.in").write_text(SNAP_INPUT.format(what="the timing case", n=16, l=1.6, chunk=4, nang=10,
                                                           ng=8))


# public applications: where the code is, what its build needs, how it is built, run and checked
PUBLIC = {
    "parres": {
        "code": "parres", "prepare": _parres,
        "build": "make -C FORTRAN stencil transpose",
        "run": {"small": "./FORTRAN/stencil 10 1000 && ./FORTRAN/transpose 10 1000",
                "large": "./FORTRAN/stencil 20 4000 && ./FORTRAN/transpose 20 4000"},
        "check": "Solution validates", "ignore": ["Rate", "Avg time"],
    },
    "stream": {
        "code": "stream", "prepare": _stream,
        "build": "make stream_f.exe",
        # 3 x 20M doubles: stream.f's arrays are locals, on the stack with -fopenmp
        "run": {"small": "ulimit -s unlimited; ./stream_f.exe", "large": "ulimit -s unlimited; ./stream_f.exe"},
        "check": "Solution Validates",
        "ignore": [r"^(Copy|Scale|Add|Triad):", "granularity", "Number of Threads", "per active thread",
                   r"^ *\*+ *WARNING", "ticks", "clock"],
    },
}
PUBLIC["snap"] = {
    "code": "snap", "prepare": _snap,
    "build": "make -C src MPI=no FORTRAN=gfortran",  # its Makefile's serial + OpenMP build
    "run": {"small": "./src/gsnap snap.in snap.out", "large": "./src/gsnap snap-large.in snap.out"},
    "check": "Success! Done in a SNAP!", "outputs": ["snap.out"],
    "ignore": ["Ran on", r"^ {4,}(Parallel Setup|Input|Setup|Solve|Parameter Setup|Outer Source|Inner Iterations|"
               r"Inner Source|Transport Sweeps|Inner Misc Ops|Solution Misc Ops|Output) +[0-9]",
               "Total Execution", "Grind"],
}
SAMPLE_APPS = ("heat77", "md", "wave90")


def _spec(root: Path) -> dict:
    import yaml

    return yaml.safe_load((root / "port-fortran-app.yaml").read_text()) or {}


def app_command(name: str, out: Path, args) -> tuple[list[str], Path]:
    """The `port-fortran app` command of one application (and its root)."""
    pf = [sys.executable, "-m", "port_fortran.cli"]
    common = ["--backends", args.backends, "--out", str(out / name), "--repeat", str(args.repeat), "-j", str(args.jobs)]
    if args.threads:
        common += ["--threads", str(args.threads)]
    if args.timeout:
        common += ["--timeout", str(args.timeout)]
    if name in SAMPLE_APPS:
        root = SAMPLES / name
        cmd = [*pf, "app", str(root), *common]
        if args.size == "large":
            cmd += ["--run", _spec(root)["large_run"]]
        return cmd, root
    app = PUBLIC[name]
    src = Path(args.corpus_src) / app["code"]
    if not src.is_dir():
        raise SystemExit(f"{src}: not found; materialise the corpus first: python bench/realcode/get.py "
                         f"--codes {app['code']} (--mirror-root DIR for local mirrors)")
    root = out / "src" / name
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(src, root, symlinks=True)
    app["prepare"](root)
    cmd = [*pf, "app", str(root), *common, "--build", app["build"], "--run", app["run"][args.size],
           "--check", app["check"]]
    for ig in app["ignore"]:
        cmd += ["--ignore", ig]
    for o in app.get("outputs", []):
        cmd += ["--output", o]
    return cmd, root


def _fmt(x: Optional[float]) -> str:
    return "-" if x is None else (f"{x:.3f}" if x < 10 else f"{x:.1f}")


def row(name: str, app: dict, backends: list[str]) -> dict:
    by = {b["backend"]: b for b in app.get("backends", [])}
    orig = app.get("original", {})
    r = {"app": name, "matched": app.get("matched", False),
         "original_serial": (orig.get("serial") or {}).get("seconds"),
         "original_openmp": (orig.get("openmp") or {}).get("seconds"),
         "ported": [p["name"] for p in app.get("ported", [])], "kept": len(app.get("kept", [])),
         "left_out": [d["name"] for d in app.get("left_out", [])], "backends": {}}
    for b in backends:
        x = by.get(b, {})
        r["backends"][b] = {"seconds": x.get("modern_seconds"), "matched": x.get("matched", False),
                            "no_residency": x.get("modern_seconds_no_residency"), "reason": x.get("reason", "")}
    return r


def table(rows: list[dict], backends: list[str]) -> str:
    head = ["application", "original serial (s)", "original OpenMP (s)"]
    for b in backends:
        head += [f"modern {b} (s)"] if b not in ("cuda", "hip") else [f"modern {b} resident (s)",
                                                                       f"modern {b} copies (s)"]
    head += ["matched", "ported", "kept"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["app"], _fmt(r["original_serial"]), _fmt(r["original_openmp"]) if r["original_openmp"] else "no directives"]
        for b in backends:
            x = r["backends"][b]
            mark = "" if x["matched"] else " (NOT matched)"
            cells.append(_fmt(x["seconds"]) + mark)
            if b in ("cuda", "hip"):
                cells.append(_fmt(x["no_residency"]))
        ok = [b for b in backends if r["backends"][b]["matched"]]
        cells += [", ".join(ok) or "none", f"{len(r['ported'])}: {', '.join(r['ported'])}"
                  + (f" (left out: {', '.join(r['left_out'])})" if r["left_out"] else ""), str(r["kept"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default=",".join((*SAMPLE_APPS, *PUBLIC)),
                    help=f"comma-separated, from {', '.join((*SAMPLE_APPS, *PUBLIC))}")
    ap.add_argument("--backends", default="serial,openmp")
    ap.add_argument("--kokkos-root", default=None, metavar="PREFIX",
                    help="a Kokkos install for the device backend (Kokkos_ROOT of the runs); host backends keep "
                         "port-fortran's own install")
    ap.add_argument("--size", default="large", choices=["small", "large"],
                    help="the run of each application: its test case (small) or its timing case (large)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per program; the time is the median")
    ap.add_argument("--threads", type=int, default=None, help="OpenMP threads (default: port-fortran's)")
    ap.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="limit of each program run, original and modern (port-fortran app --timeout; default its own)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="routines ported at a time")
    ap.add_argument("--out", default="bench-apps-out", help="where the applications' runs go")
    ap.add_argument("--corpus-src", default=str(CORPUS_SRC), help="the materialised real-code corpus")
    ap.add_argument("--results", default=None, help="the table (default bench/apps/results_<date>.md)")
    ap.add_argument("--omp-wait-policy", default=None, choices=["active", "passive"],
                    help="OMP_WAIT_POLICY of every run, original and modern (passive on a shared, loaded machine)")
    args = ap.parse_args(argv)

    apps = [a.strip() for a in args.apps.split(",") if a.strip()]
    unknown = [a for a in apps if a not in SAMPLE_APPS and a not in PUBLIC]
    if unknown:
        ap.error(f"unknown application(s): {', '.join(unknown)}")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if args.kokkos_root:
        env["Kokkos_ROOT"] = str(Path(args.kokkos_root).resolve())
    if args.omp_wait_policy:
        env["OMP_WAIT_POLICY"] = args.omp_wait_policy.upper()
    rows, commands, loads = [], [], []
    t_all = time.monotonic()
    for name in apps:
        cmd, root = app_command(name, out, args)
        shown = " ".join(shlex.quote(c) for c in cmd[2:]).replace("port_fortran.cli", "port-fortran", 1)
        commands.append(f"{name}: {shown}")
        print(f"== {name}: {shown}", flush=True)
        t0 = time.monotonic()
        with open(out / f"{name}.log", "w") as log:
            rc = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        loads.append(os.getloadavg()[0])
        res = out / name / "application.json"
        if not res.is_file():
            print(f"   {name}: no application.json (exit {rc}); see {out / (name + '.log')}", flush=True)
            rows.append(row(name, {}, backends))
            continue
        app = json.loads(res.read_text())
        rows.append(row(name, app, backends))
        print(f"   exit {rc} in {time.monotonic() - t0:.0f} s; matched: {app['matched']}", flush=True)
    date = dt.date.today().isoformat()
    results = Path(args.results) if args.results else HERE / f"results_{date}.md"
    cpu = ""
    try:
        cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                    if ln.startswith("model name")), "")
    except OSError:
        pass
    lines = [f"# Whole applications, original and modern ({date})", "",
             f"Host {platform.node()}: {os.cpu_count()} cores ({cpu}); backends {', '.join(backends)}; "
             f"size {args.size}; median of {args.repeat} run(s) per program; OpenMP threads "
             f"{args.threads or 'port-fortran default'}"
             + (f"; OMP_WAIT_POLICY={args.omp_wait_policy}" if args.omp_wait_policy else "")
             + f"; load average after each application: {', '.join(f'{x:.1f}' for x in loads)}.", "",
             "Command:", "", "```sh",
             "python bench/apps/run_apps.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None
                                                                                   else sys.argv[1:])),
             "```", "", "which ran, per application:", "", "```sh", *commands, "```", "",
             "Times are of the whole program run (`--run`), seconds, the median of the runs; the original "
             "OpenMP column is the original built as its own build does, run on the OpenMP threads "
             "(only where its build uses OpenMP). A modern time is shown only for a modern program that "
             "built and ran; `(NOT matched)` marks one whose output differs from the original's. CUDA: "
             "`resident` keeps arrays on the device between calls (the coherence calls of the modern tree), "
             "`copies` is the same build with `PF_RESIDENT=0` (every port copies its arrays in and out).", "",
             table(rows, backends), "",
             f"Total wall time of this script: {time.monotonic() - t_all:.0f} s. Runs and reports: `{out}`.", ""]
    for r in rows:
        bad = {b: x["reason"] for b, x in r["backends"].items() if not x["matched"] and x["reason"]}
        for b, why in bad.items():
            lines.append(f"- {r['app']} on {b}: {why[:400]}")
    results.write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"table: {results}")
    return 0 if all(r["matched"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
