"""What the integration tests that build and prove ports need on this machine (shared by
the test modules: import it after putting the tests' folder on ``sys.path``)."""
from __future__ import annotations

import shutil


def missing(backends=("serial", "openmp")) -> str:
    """Why ports cannot be built and proven here ('' when they can): gfortran, cmake and a
    Kokkos install with each of ``backends``."""
    if not shutil.which("gfortran") or not shutil.which("cmake"):
        return "gfortran and cmake are needed"
    from port_fortran.build_runner.kokkos import find_install

    lacking = [b for b in backends if find_install(b) is None]
    if lacking:
        return (f"no Kokkos install with the {' and '.join(b.capitalize() for b in lacking)} backend(s) "
                "(port-fortran kokkos install)")
    return ""
