"""``port-fortran doctor`` and ``port-fortran kokkos install|list``."""
from __future__ import annotations

import json
import sys

from ..errors import UserError
from ..records import BACKENDS

EXIT_MISSING = 3


def _backends(spec: str) -> list[str]:
    names = [b.strip().lower() for b in (spec or "").split(",") if b.strip()]
    bad = [b for b in names if b not in BACKENDS]
    if bad:
        raise UserError(f"unknown backend {bad[0]!r} in --backends; choose from {', '.join(BACKENDS)}")
    return names


def _console():
    from rich.console import Console

    con = Console(highlight=False, soft_wrap=False)
    if not con.is_terminal:  # logs and pipes: do not fold paths at 80 columns
        con = Console(highlight=False, soft_wrap=False, width=160)
    return con


def _install_table(installs, title="Kokkos installs"):
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    for col in ("version", "backends", "arch", "found via", "prefix"):
        t.add_column(col, overflow="fold")
    for k in installs:
        arch = ",".join(k.arch) or "host"
        if k.cxx_flags:
            arch += f" (flags: {k.cxx_flags})"
        t.add_row(k.version, ",".join(k.backends), arch, k.found_via, k.prefix)
    return t


def cmd_doctor(args) -> int:
    from .toolchain import find_tools, missing_for

    backends = _backends(getattr(args, "backends", "serial,openmp"))
    tc = find_tools()
    miss = missing_for(tc, backends)
    required = [m for m in miss if m.required]
    if getattr(args, "json", False):
        data = tc.to_dict()
        data["backends"] = backends
        data["missing"] = [m.__dict__ for m in miss]
        data["ok"] = not required
        print(json.dumps(data, indent=2))
        return EXIT_MISSING if required else 0

    from rich.table import Table

    con = _console()
    con.print(f"Python {tc.python}")
    t = Table(title="Python packages", title_justify="left")
    t.add_column("package")
    t.add_column("version")
    for p in tc.packages:
        t.add_row(p.name + ("" if p.required else " (optional)"),
                  p.version or ("[red]missing[/red]" if p.required else "[yellow]not installed[/yellow]"))
    con.print(t)
    t = Table(title="Tools", title_justify="left")
    for col in ("tool", "version", "path"):
        t.add_column(col, overflow="fold")
    for name, tool in tc.tools.items():
        via = {"python-package": " (the cmake Python package)", "PORT_FORTRAN_CMAKE": " (PORT_FORTRAN_CMAKE)"}
        t.add_row(name, tool.version if tool.found else "[yellow]not found[/yellow]",
                  (tool.path or "") + via.get(tool.source, ""))
    con.print(t)
    if tc.gpus:
        t = Table(title="GPUs", title_justify="left")
        for col in ("name", "memory", "driver", "compute capability"):
            t.add_column(col)
        for g in tc.gpus:
            t.add_row(g.name, g.memory, g.driver, g.compute_cap)
        con.print(t)
    else:
        con.print("GPUs: none visible (nvidia-smi absent or lists none)")
    if tc.kokkos:
        con.print(_install_table(tc.kokkos))
    else:
        con.print("Kokkos installs: none found (Kokkos_ROOT, CMAKE_PREFIX_PATH, the cache)")
    want = ",".join(backends)
    if not miss:
        con.print(f"[green]ready[/green] for backends {want}")
        return 0
    t = Table(title=f"Missing for backends {want}", title_justify="left")
    for col in ("what", "why", "fix"):
        t.add_column(col, overflow="fold")
    for m in miss:
        t.add_row(m.what + ("" if m.required else " (optional)"), m.why, m.fix)
    con.print(t)
    if required:
        con.print(f"[red]not ready[/red] for backends {want}: {len(required)} required piece(s) missing")
        return EXIT_MISSING
    con.print(f"[green]ready[/green] for backends {want} (optional pieces missing)")
    return 0


def cmd_kokkos(args) -> int:
    action = getattr(args, "kokkos_command", None)
    if action == "list":
        from .kokkos import find_installs

        installs = find_installs()
        if not installs:
            print("no Kokkos install found (Kokkos_ROOT, CMAKE_PREFIX_PATH, the cache); "
                  "make one with: port-fortran kokkos install --backends serial,openmp")
            return 0
        _console().print(_install_table(installs))
        return 0
    if action == "install":
        from .kokkos_install import install

        res = install(args.backends, source=args.source, arch=args.arch, cxx_flags=args.cxx_flags,
                      prefix=args.prefix, jobs=args.jobs)
        k = res.install
        if res.already:
            print(f"already installed at {k.prefix} (Kokkos {k.version} [{','.join(k.backends)}] "
                  f"arch={','.join(k.arch) or 'host'})")
        else:
            print(f"installed Kokkos {k.version} [{','.join(k.backends)}] arch={','.join(k.arch) or 'host'} "
                  f"at {k.prefix} in {res.seconds:.0f} s")
            print("port-fortran finds it through its registry; for your own CMake projects: "
                  f"export Kokkos_ROOT={k.prefix}")
        return 0
    raise UserError("usage: port-fortran kokkos install|list (see port-fortran kokkos --help)")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(1)
