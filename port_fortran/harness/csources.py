"""C sources of a tree: routines the Fortran calls and no Fortran file defines (a timer
such as STREAM's ``mysecond.c`` or NPB's ``wtime.c``).

Nothing in them is ported. They are compiled with the C compiler (the include dirs and
defines of the tree, optimisation and OpenMP as the Fortran flags say) and their objects
linked wherever the original objects need a symbol they define, exactly like the Fortran
files of the tree (``linking.TreeObjects``, the program proofs). ``linking.c_symbols`` compiles
each once, at planning, to learn which symbols each defines (``nm``); a C file that does
not compile is reported and left out (the routines it defines are then stubbed, as a
library's would be).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Sequence

from ..build_runner.sandbox import Limits, run_limited
from ..errors import ToolMissing, UserError
from ..fortran.parse import C_EXTS

C_LIMITS = Limits(wall_s=300.0, cpu_s=None, mem_mb=None)


def c_compiler() -> str:
    for name in (os.environ.get("CC") or "", "gcc", "cc"):
        if name and shutil.which(name):
            return shutil.which(name)  # type: ignore[return-value]
    raise ToolMissing("no C compiler (gcc or cc, or $CC) on PATH: the tree has C sources to link")


def c_flags(fortran_flags: Sequence[str]) -> list[str]:
    """The C compiler's share of a Fortran flag list: optimisation, OpenMP, debug, PIC, and
    the preprocessor's -I/-D/-U (gfortran's own flags such as -ffixed-form are left out)."""
    out = []
    for f in fortran_flags:
        if f.startswith(("-I", "-D", "-U", "-O")) or f in ("-fopenmp", "-g", "-fPIC", "-fpic", "-pthread"):
            out.append(f)
    return out


def is_c(path) -> bool:
    """A C source, as the front end's ``discover_c`` finds them."""
    return Path(path).suffix in C_EXTS


def compile_c(src, obj: Path, flags: Sequence[str], workdir: Path, limits: Limits = C_LIMITS) -> Path:
    """Compile one C source; raises UserError with the compiler's complaint."""
    obj.parent.mkdir(parents=True, exist_ok=True)
    cmd = [c_compiler(), *c_flags(flags), "-c", str(Path(src).resolve()), "-o", str(obj)]
    res = run_limited(cmd, workdir, limits)
    if not res.ok:
        tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-12:])
        raise UserError(f"{src}: the C source does not compile ({' '.join(cmd[:1])} ...):\n{tail}")
    return obj

