"""Where port-fortran keeps what it makes once per machine and reuses: Kokkos installs
(``kokkos/``), the front end's parse cache (``parse/``), the Kokkos profiling hooks
(``profiling/``), the memory-bandwidth probe (``bandwidth.json``, ``probe/``)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$PORT_FORTRAN_CACHE``, else ``~/.cache/port-fortran``: the one root of every cache."""
    env = os.environ.get("PORT_FORTRAN_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "port-fortran"
