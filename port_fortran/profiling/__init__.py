"""Per-kernel times from port-fortran's own Kokkos Tools profiling library.

Typical use (the harness runs the program, the optimizer reads the result)::

    from port_fortran.profiling import build_hooks, profiling_env, read_profile, summarize
    lib = build_hooks()                                   # once; cached by source hash
    env = profiling_env(lib, work / "kokkosp.json")       # merge into the run's env
    run_limited([exe, *args], work, limits, env_extra={**run_env, **env})
    text = summarize(read_profile(work / "kokkosp.json"))  # lines for prompts and reports

Profiling is optional: :class:`ProfilingError` (and its :class:`ProfileMissing`) mean "no
per-kernel times", never a failed port.
"""
from .hooks import (
    CXX_FLAGS,
    LIB_NAME,
    LIBRARY_ENVS,
    OUTPUT_ENV,
    SOURCE,
    WARMUP_ENV,
    ProfileMissing,
    ProfilingError,
    build_hooks,
    find_host_cxx,
    hooks_cache_dir,
    profiling_env,
)
from .profile import (
    KERNEL_KINDS,
    KernelProfile,
    Profile,
    fmt_bytes,
    fmt_seconds,
    kernel_times,
    load_profile,
    merge,
    read_profile,
    summarize,
)

__all__ = [
    "CXX_FLAGS", "LIB_NAME", "LIBRARY_ENVS", "OUTPUT_ENV", "SOURCE", "WARMUP_ENV",
    "ProfileMissing", "ProfilingError", "build_hooks", "find_host_cxx", "hooks_cache_dir",
    "profiling_env",
    "KERNEL_KINDS", "KernelProfile", "Profile", "fmt_bytes", "fmt_seconds", "kernel_times",
    "load_profile", "merge", "read_profile", "summarize",
]
