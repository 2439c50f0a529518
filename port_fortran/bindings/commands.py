"""``port-fortran bindings PORT_DIR...`` and the ``--python`` step of a run.

Without ``--module`` each port gets its own module ``<kernel>_kokkos`` in
``PORT_DIR/python/``; with ``--module NAME`` all the ports go into one module (one Kokkos
in the process, COMMON blocks shared) in ``-o DIR`` (default ``./python``). A run with
``--python`` builds one module of every verified kernel (``--python-module``, default
``kokkos_ports``) in ``OUT/python/`` and records it in the run database.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Optional

from ..errors import UserError
from ..records import BACKENDS


def _say(msg: str) -> None:
    print(msg, flush=True)


def _report(b, stream=None) -> None:
    out = stream or sys.stdout
    if b.ok:
        d = Path(b.path).parent
        print(f"{b.module} [{b.backend}]: {b.path} ({', '.join(b.functions)}) in {b.seconds:.0f} s with {b.cmake}",
              file=out)
        print(f"  use it: PYTHONPATH={d} python -c \"import {b.module}; help({b.module})\"", file=out)
    else:
        print(f"{b.module} [{b.backend}]: build FAILED ({b.log_path}):\n  " + "\n  ".join(b.message.splitlines()),
              file=out)


def cmd_bindings(args) -> int:
    from .build import build_module, default_backend, load_port
    from .plan import check_module_name

    backend = getattr(args, "backend", None)
    if backend and backend not in BACKENDS:
        raise UserError(f"--backend {backend!r}: choose from {', '.join(BACKENDS)}")
    ports = [load_port(d) for d in args.port_dirs]
    module = getattr(args, "module", None)
    if module:
        check_module_name(module)
        groups = [(module, ports, Path(args.output or "python"))]
    else:
        if args.output and len(ports) > 1:
            raise UserError("-o/--output with several port directories needs --module NAME (one module for all); "
                            "without it each module goes into its port's python/ directory")
        groups = [(f"{p.kernel.name}_kokkos", [p], Path(args.output) if args.output else p.port_dir / "python")
                  for p in ports]
    failed = 0
    for name, group, out_dir in groups:
        b_end = backend or default_backend(group)
        for p in group:
            if b_end not in p.verified_on:
                print(f"port-fortran: warning: {p.kernel.name} ({p.port_dir}) is not verified on {b_end} "
                      f"(verdict.json): the module runs an unproven port; `port-fortran verify {p.port_dir} "
                      f"--backends {b_end}` proves it", file=sys.stderr)
        res = build_module(name, group, b_end, out_dir, jobs=getattr(args, "jobs", None))
        _report(res)
        failed += 0 if res.ok else 1
    return 1 if failed else 0


# --------------------------------------------------------------------------- a run's module

def run_backend(backends: list[str]) -> str:
    """The backend of a run's module: the most parallel one the run verified on."""
    from .build import BACKEND_PREFERENCE

    for b in BACKEND_PREFERENCE:
        if b in backends:
            return b
    return backends[0]


def build_run_module(db: Any, run_id: str, out: Path, module: str, backends: list[str],
                     stream=None) -> Optional[Any]:
    """One module of every kernel the run verified, in ``out/python``; recorded in the run
    database (the module in ``python_modules``, each kernel as a ``python`` attempt)."""
    from .build import build_module, load_port, plan_module

    stream = stream or sys.stderr
    backend = run_backend(backends)
    ports, included = [], []
    for k in db.kernels(run_id):
        if k["status"] != "verified" or not k["port_dir"]:
            continue
        t0 = time.monotonic()
        try:
            p = load_port(k["port_dir"])
            # with the ports taken so far: a clash (a second routine of one name, a COMMON
            # block laid out differently) leaves this kernel out, not the module
            plan_module(module, ports + [p])
        except UserError as exc:
            db.add_attempt(run_id, k["kernel_id"], "python", False, str(exc)[:2000], backend=backend,
                           seconds=time.monotonic() - t0)
            print(f"port-fortran: {k['kernel_id']}: not in the Python module: {exc}", file=stream)
            continue
        ports.append(p)
        included.append(k["kernel_id"])
    if not ports:
        db.add_python_module(run_id, module, backend, ok=False, message="no verified kernel to bind")
        print("port-fortran: --python: no verified kernel to put in a Python module", file=stream)
        return None
    try:
        res = build_module(module, ports, backend, out / "python")
    except UserError as exc:  # a missing tool (pybind11, Python headers) or an interface clash
        db.add_python_module(run_id, module, backend, ok=False, message=str(exc), kernels=included)
        for kid in included:
            db.add_attempt(run_id, kid, "python", False, str(exc)[:2000], backend=backend)
        print(f"port-fortran: --python: {exc}", file=stream)
        return None
    db.add_python_module(run_id, module, backend, ok=res.ok, path=res.path, cmake=res.cmake, message=res.message,
                         kernels=included, seconds=res.seconds)
    for kid, p in zip(included, ports):
        detail = f"{module}.{p.kernel.name} in {res.path}" if res.ok else f"module build failed: {res.message}"
        db.add_attempt(run_id, kid, "python", res.ok, detail[:2000], backend=backend, seconds=res.seconds / len(ports))
    _report(res, stream)
    return res
