"""The ``port-fortran`` command.

``port-fortran SRC...`` (no sub-command) ports every kernel it finds. Sub-commands:
``list``, ``translate``, ``verify``, ``bench``, ``bindings``, ``report``, ``compare``,
``batch``, ``doctor``, ``kokkos install``.

Each sub-command's work lives in the package that owns it (``<pkg>/commands.py``); this
module only parses arguments and turns errors into one clear line and an exit code:

  0  success (every kernel attempted is verified)
  1  some kernels were not ported / not verified (see the report)
  2  bad input or usage (unreadable source, syntax error, bad option, bad spec)
  3  a required tool is missing (gfortran, cmake, a Kokkos install); `doctor` says how
  4  interrupted (the run can be resumed with --resume RUN_ID)
"""
from __future__ import annotations

import argparse
import importlib
import sys
import traceback

from . import __version__
from .errors import UserError

SUBCOMMANDS = ("run", "list", "translate", "program", "app", "verify", "bench", "bindings", "report", "compare", "batch",
               "doctor", "kokkos")

EPILOG = """\
examples:
  port-fortran doctor --backends serial,openmp      what is installed, what is missing
  port-fortran kokkos install --backends serial,openmp
  port-fortran list fortran_kernels/                the kernels found, parallel loops
  port-fortran fortran_kernels/vecops.F90 --backends serial,openmp --out out/
  port-fortran app heat77/ --build make --run ./heat --check 'SELF-CHECK PASSED' --ignore TIME --out out/
                                                    modernise a whole application, proven by its output
  port-fortran report out/                          re-render report.{json,md,html}
  port-fortran bindings out/blas1/daxpy             Python module daxpy_kokkos (numpy arrays)

Exit codes: 0 all verified, 1 some kernels not ported or not verified,
2 bad input or usage, 3 a required tool is missing, 4 interrupted (resume it).
"""


def _add_source_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                   help="include directory for the preprocessor and Fortran INCLUDE (repeatable)")
    p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]",
                   help="preprocessor definition (repeatable)")


def _add_run_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backends", default="serial,openmp",
                   help="Kokkos backends to build and verify, comma separated: serial,openmp,cuda,hip "
                        "(default: serial,openmp)")
    p.add_argument("--model", default=None,
                   help="translation model: 'rules' (default, offline), 'openai:<name>', or a model name "
                        "served at --base-url; a chain such as 'rules,openai:gpt-4o' falls back in order")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    p.add_argument("--kernel", action="append", default=[], metavar="NAME",
                   help="only this kernel (repeatable)")
    p.add_argument("--mode", default=None, choices=["auto", "full", "hybrid"],
                   help="full: the routine becomes C++; hybrid: it stays Fortran and its parallel loop nests "
                        "become Kokkos kernels it calls; auto (default): full where the rules can, else hybrid")
    p.add_argument("--out", default="port-fortran-out", metavar="DIR", help="output directory")
    p.add_argument("-j", "--jobs", type=int, default=None, help="kernels processed at once")
    p.add_argument("--max-cost", type=float, default=None, metavar="USD",
                   help="stop LLM calls once this much has been spent")
    p.add_argument("--resume", default=None, metavar="RUN_ID", help="continue an interrupted run")
    p.add_argument("--config", default=None, metavar="FILE", help="YAML configuration file")
    p.add_argument("--executor", default=None, choices=["local", "parsl"], help="where kernels run")
    p.add_argument("--quiet", action="store_true", help="no live progress view (for batch logs)")
    p.add_argument("--fflags", default=None, metavar="FLAGS",
                   help="extra gfortran flags for compiling the original, e.g. '-fno-range-check' (quoted; "
                        "recorded in each port's port.json)")
    _add_source_opts(p)


def _add_python_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--python", action="store_true",
                   help="after the run, build one Python module of every verified kernel in OUT/python "
                        "(docs/python.md)")
    p.add_argument("--python-module", default=None, metavar="NAME",
                   help="name of that module (default kokkos_ports; implies --python)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="port-fortran",
        description="Port legacy Fortran kernels to Kokkos C++, build them for each backend, and "
                    "prove each port against the original Fortran (same outputs on fresh inputs) "
                    "and time it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"port-fortran {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("run", help="port every kernel in SRC (the default command)")
    p.add_argument("sources", nargs="+", metavar="SRC", help="Fortran files or directories")
    _add_run_opts(p)
    _add_python_opts(p)

    p = sub.add_parser("list", help="list the kernels in files or trees")
    p.add_argument("sources", nargs="+", metavar="SRC")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    _add_source_opts(p)

    p = sub.add_parser("translate", help="write a port without building it")
    p.add_argument("source", metavar="FILE")
    p.add_argument("--mode", default="auto", choices=["auto", "full", "hybrid"],
                   help="full, hybrid (the routine stays Fortran, its loop nests become kernels) or auto "
                        "(default: full where the rules can, else hybrid)")
    p.add_argument("--kernel", default=None, metavar="NAME")
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    _add_source_opts(p)

    p = sub.add_parser("program", help="hybrid port of a main program, proven by comparing what both programs print")
    p.add_argument("source", metavar="FILE", help="the file holding the main program")
    p.add_argument("--with", dest="with_sources", action="append", default=[], metavar="SRC",
                   help="another source the program is built from, compiled before FILE (modules first; repeatable)")
    p.add_argument("--backends", default="serial,openmp")
    p.add_argument("--out", default="port-fortran-out", metavar="DIR", help="the port goes to DIR/<program>/")
    p.add_argument("--ignore", action="append", default=[], metavar="REGEX",
                   help="output lines to leave out of the comparison (timings; repeatable)")
    p.add_argument("--rtol", type=float, default=None, metavar="X",
                   help="relative tolerance of printed numbers (default 1e-9, plus one unit of the last digit)")
    p.add_argument("--args", default="", metavar="'ARGS'", help="command-line arguments of the program")
    p.add_argument("--input", action="append", default=[], metavar="FILE",
                   help="a file the program reads, copied into both programs' working directories (repeatable)")
    p.add_argument("--stdin", default=None, metavar="FILE", help="what both programs read on standard input")
    p.add_argument("--fflags", default=None, metavar="FLAGS",
                   help="extra gfortran flags the program is built with, e.g. '-fopenmp -fdefault-real-8' (quoted)")
    _add_source_opts(p)

    p = sub.add_parser("app", help="modernise a whole application: build it through a compiler wrapper, port the "
                                   "routines it is built from, build and run the modern tree, compare the output",
                       description="The first SRC is the application's root: it is copied, and --build / --run run at "
                                   "the root of the copy (docs/app.md). Exit 0 only when the modern program printed "
                                   "what the original printed on every backend.")
    p.add_argument("sources", nargs="+", metavar="SRC", help="the application's root, then other trees its build "
                                                             "compiles sources from")
    p.add_argument("--build", default=None, metavar="CMD",
                   help="the application's build command, e.g. 'make' (default: from ROOT/port-fortran-app.yaml)")
    p.add_argument("--run", default=None, metavar="CMD",
                   help="how to run it, e.g. './heat < heat.in' (default: from ROOT/port-fortran-app.yaml)")
    p.add_argument("--check", default=None, metavar="REGEX",
                   help="a line the program prints when its own self-check passes (required in the modern output)")
    p.add_argument("--ignore", action="append", default=[], metavar="REGEX",
                   help="output lines left out of the comparison (timings; repeatable)")
    p.add_argument("--output", action="append", default=[], metavar="FILE",
                   help="a file the program writes (relative to the root), compared like its output (repeatable)")
    p.add_argument("--rtol", type=float, default=None, metavar="X",
                   help="relative tolerance of printed numbers (default 1e-9, plus one unit of the last digit)")
    p.add_argument("--backends", default="serial,openmp")
    p.add_argument("--out", default="port-fortran-app", metavar="DIR")
    p.add_argument("--keep-going", action="store_true",
                   help="when the modern program differs, leave out ports (bisection) until it matches")
    p.add_argument("--main", default="hybrid", choices=["hybrid", "keep"],
                   help="main programs: hybrid ports proven by the application's output (default), or kept")
    p.add_argument("--residency", default="on", choices=["on", "off"],
                   help="on a GPU keep arrays on the device between calls (coherence calls in the modern tree)")
    p.add_argument("--check-residency", action="store_true",
                   help="also build and run the modern tree on serial with a separate device memory emulated "
                        "(every copy real): checks the coherence calls without a GPU")
    p.add_argument("--reuse-ports", action="store_true",
                   help="reuse the ports of the last run in --out (no porting; the original is built and run again)")
    p.add_argument("--repeat", type=int, default=1, metavar="N", help="runs per program for its time (median)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="OpenMP threads (default: as the harness)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="wall-clock limit of each run (builds get three times as long)")
    p.add_argument("--kernel", action="append", default=[], metavar="NAME", help="only these routines (repeatable)")
    p.add_argument("--mode", default=None, choices=["auto", "full", "hybrid"])
    p.add_argument("--model", default=None)
    p.add_argument("--base-url", default=None)
    p.add_argument("--config", default=None, metavar="FILE")
    p.add_argument("-j", "--jobs", type=int, default=None)
    p.add_argument("--quiet", action="store_true")

    p = sub.add_parser("verify", help="re-run the proof for an existing port directory")
    p.add_argument("port_dir", metavar="DIR")
    p.add_argument("--backends", default="serial,openmp")
    p.add_argument("--seeds", type=int, default=None, help="number of random input sets")
    p.add_argument("--timing-size", action="store_true",
                   help="also verify at the timing sizes (what `bench` does before it times; kept per build)")

    p = sub.add_parser("bench", help="time an existing port against the original")
    p.add_argument("port_dir", metavar="DIR")
    p.add_argument("--backends", default="serial,openmp")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--repeats", type=int, default=None)

    p = sub.add_parser("bindings", help="build Python modules of ports (pybind11; numpy arrays in, results out)",
                       description="Build a Python extension module per port directory (<kernel>_kokkos in "
                                   "PORT_DIR/python/), or one module of all of them with --module. Each routine is "
                                   "a function of the same name taking its arguments in the Fortran order "
                                   "(docs/python.md).")
    p.add_argument("port_dirs", nargs="+", metavar="PORT_DIR", help="port directories written by a run")
    p.add_argument("--backend", default=None,
                   help="Kokkos backend to build for: serial, openmp, cuda, hip (default: the most parallel "
                        "backend every port verified on)")
    p.add_argument("--module", default=None, metavar="NAME", help="one module NAME holding every port given")
    p.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="where the module goes (default: PORT_DIR/python, or ./python with --module)")
    p.add_argument("-j", "--jobs", type=int, default=None, help="parallel compile jobs")

    p = sub.add_parser("report", help="render report.json, report.md and report.html from a run database")
    p.add_argument("out_dir", metavar="DIR")
    p.add_argument("--run", default=None, metavar="RUN_ID")

    p = sub.add_parser("compare", help="run the same kernels through several models")
    p.add_argument("sources", nargs="+", metavar="SRC")
    p.add_argument("--models", required=True, help="comma separated, e.g. rules,openai:gpt-4o-mini")
    _add_run_opts(p)

    p = sub.add_parser("batch", help="run a batch manifest (YAML), locally or through Parsl")
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("--executor", default=None, choices=["local", "parsl"])
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--out", default=None, metavar="DIR")
    p.add_argument("--quiet", action="store_true")

    p = sub.add_parser("doctor", help="what is installed and what is missing")
    p.add_argument("--backends", default="serial,openmp")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("kokkos", help="manage Kokkos installs")
    ksub = p.add_subparsers(dest="kokkos_command", metavar="ACTION")
    k = ksub.add_parser("install", help="build and install Kokkos for the given backends")
    k.add_argument("--backends", default="serial,openmp")
    k.add_argument("--source", default=None, metavar="DIR|TARBALL",
                   help="Kokkos source tree or tarball (default: Kokkos 3.4.01 from the PyPI sdist pykokkos-base==0.0.7)")
    k.add_argument("--arch", default=None, metavar="NAME", help="Kokkos architecture, e.g. HOPPER90, AMPERE80")
    k.add_argument("--cxx-flags", default=None, metavar="FLAGS")
    k.add_argument("--prefix", default=None, metavar="DIR")
    k.add_argument("--jobs", type=int, default=None)
    ksub.add_parser("list", help="the Kokkos installs found")
    return parser


# sub-command -> (module, function); each function takes the parsed args and returns an exit code
HANDLERS = {
    "run": ("port_fortran.pipeline.commands", "cmd_run"),
    "list": ("port_fortran.fortran.commands", "cmd_list"),
    "translate": ("port_fortran.translate.commands", "cmd_translate"),
    "program": ("port_fortran.harness.program_proof", "cmd_program"),
    "app": ("port_fortran.app.commands", "cmd_app"),
    "verify": ("port_fortran.harness.commands", "cmd_verify"),
    "bench": ("port_fortran.harness.commands", "cmd_bench"),
    "bindings": ("port_fortran.bindings.commands", "cmd_bindings"),
    "report": ("port_fortran.reports.commands", "cmd_report"),
    "compare": ("port_fortran.pipeline.batch", "cmd_compare"),
    "batch": ("port_fortran.pipeline.batch", "cmd_batch"),
    "doctor": ("port_fortran.build_runner.commands", "cmd_doctor"),
    "kokkos": ("port_fortran.build_runner.commands", "cmd_kokkos"),
}


def normalize_argv(argv: list[str]) -> list[str]:
    """``port-fortran SRC...`` means ``port-fortran run SRC...``."""
    i = 0
    while i < len(argv) and argv[i] == "--debug":
        i += 1
    if i < len(argv) and not argv[i].startswith("-") and argv[i] not in SUBCOMMANDS:
        return argv[:i] + ["run"] + argv[i:]
    return argv


def main(argv: list[str] | None = None) -> int:
    argv = normalize_argv(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    if args.command == "kokkos" and not getattr(args, "kokkos_command", None):
        parser.parse_args(["kokkos", "--help"])
    module, func = HANDLERS[args.command]
    try:
        handler = getattr(importlib.import_module(module), func)
        return int(handler(args) or 0)
    except UserError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"port-fortran: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("port-fortran: interrupted", file=sys.stderr)
        return 4
    except Exception as exc:  # a bug: one line, the traceback with --debug
        if args.debug:
            traceback.print_exc()
        else:
            print(f"port-fortran: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
                  file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())
