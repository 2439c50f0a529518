"""Results passed between stages (translation, build, run, verification, timing).

Plain dataclasses, JSON-friendly through :func:`port_fortran.fortran.ir.to_dict`; the run
database stores them. Owned jointly: extend with optional fields only."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .fortran.ir import Diagnostic

BACKENDS = ("serial", "openmp", "cuda", "hip")


@dataclass
class TranslateOptions:
    """Knobs the debugger and optimizer turn on the rules translator. Loops are named by
    the source line of their DO statement."""

    serial_loops: set[int] = field(default_factory=set)  # force these loops serial
    atomic_scatter: bool = True  # atomics for scattered (indirect) updates
    mdrange: bool = True  # MDRangePolicy for tightly nested parallel loops
    tile: Optional[tuple[int, ...]] = None  # MDRange tile sizes
    iterate_left: bool = True  # Fortran index fastest (LayoutLeft coalescing)
    team_reductions: bool = False  # TeamPolicy for inner reductions
    # pf::parallel_for / parallel_reduce (compat header): plain, vectorisable loops on the host
    # backends, Kokkos' policies on devices; False: Kokkos' policies everywhere (the host
    # MDRange then honours the tile sizes)
    host_loops: bool = True
    scans: bool = True  # parallel_scan for prefix sums (translate/scan.py); False: serial
    # scattered updates on Kokkos OpenMP through per-thread copies whatever the array's size
    # (pf::Scatter; default: only where the copies stay small, else atomics): contention is a
    # matter of the data, so the optimizer measures this one
    scatter_copies: bool = False
    # register blocking (translate/regblock.py): each iteration of a 2-D parallel band that
    # runs an inner loop takes a block of (inner, outer) iterations, the inner loop jammed
    register_block: Optional[tuple[int, int]] = None
    variant: str = "default"  # a name for reports


@dataclass
class Port:
    """A translated kernel. ``files`` maps file names to their text:
    ``<k>.kokkos.cpp``, ``<k>.kokkos.hpp``, ``<k>_kokkos_mod.f90``, ``pf_kokkos_compat.hpp``,
    ``pf_strings.hpp`` (the CHARACTER string runtime the compat header includes),
    ``pf_runtime.hpp`` (the residency registry the entries use), ``CMakeLists.txt`` (a library target ``<k>_kokkos`` users can add_subdirectory)."""

    kernel: str
    entry: str  # extern "C" symbol, '<k>_kokkos'
    files: dict[str, str]
    model: str = "rules"
    patterns: list[str] = field(default_factory=list)  # parallel_for, mdrange, reduce, serial, atomic, team
    notes: list[str] = field(default_factory=list)  # what the translator decided and why
    options: Optional[TranslateOptions] = None
    # 'full': the routine became C++ (entry '<k>_kokkos'); 'hybrid': it stays Fortran (a generated
    # copy of its file in ``files``, entry = its own name) and its parallel loop nests became
    # Kokkos kernels it calls; ``hybrid`` then holds translate.hybrid.HybridInfo as a dict
    mode: str = "full"
    hybrid: Optional[dict] = None
    # loops run in parallel only when a condition on run-time values holds (serial otherwise),
    # e.g. "line 24: do i parallel if incy /= 0"
    versions: list[str] = field(default_factory=list)


class TranslationRefused(Exception):
    """The rules cannot translate this kernel correctly. Carries the reasons (with lines)."""

    def __init__(self, kernel: str, diagnostics: list[Diagnostic]):
        self.kernel = kernel
        self.diagnostics = diagnostics
        super().__init__(f"{kernel}: " + "; ".join(str(d) for d in diagnostics))


@dataclass
class RunResult:
    """One sandboxed process run."""

    returncode: Optional[int]
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    timed_out: bool = False
    memory_exceeded: bool = False
    killed_reason: str = ""  # 'wall-time', 'cpu-time', 'memory', 'signal N'

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@dataclass
class BuildResult:
    backend: str
    ok: bool
    build_dir: str = ""
    seconds: float = 0.0
    log: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    condensed: str = ""  # at most 20 lines for the debugger
    artifacts: dict[str, str] = field(default_factory=dict)  # name -> path of built executables/libs
    cmake: str = ""  # which CMake built it: 'cmake 4.1.0 (<path>, from the cmake Python package)'


@dataclass
class OutputCheck:
    name: str  # argument name, or 'result' for a function result
    passed: bool
    elements: int
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    worst_index: Optional[list[int]] = None  # Fortran indices of the worst element
    tolerance: float = 0.0
    message: str = ""  # e.g. "3 elements left unwritten (NaN)"
    # an output too large to compare whole: ``elements`` of its ``total_elements`` were
    # compared, a deterministic sample touching every tile and the last elements of each dim
    sampled: bool = False
    total_elements: Optional[int] = None


@dataclass
class CaseResult:
    seed: int
    sizes: dict[str, int]
    passed: bool
    outputs: list[OutputCheck] = field(default_factory=list)
    error: str = ""  # crash, time-out, build failure
    label: str = ""  # the input set in words: seed, sizes, flag and stride values (e.g. "seed=7 n=33 trans=T")
    # '' a correctness set of the spec; 'cross-tiles' the set past every tile/team/GPU block
    # (harness.crossing); 'timing-size' the sizes a timing runs at
    kind: str = ""
    code: str = ""  # when the port is not at fault: 'original-not-finite', 'original-failed' (harness.redraw)
    # output elements (and the function result) the original changed from what it was given:
    # a case where it changed none compares inputs with inputs; -1 not counted
    changed: int = -1


@dataclass
class Verdict:
    backend: str
    passed: bool
    cases: list[CaseResult] = field(default_factory=list)
    reason: str = ""  # first failure, human readable
    # the boundary-crossing case: True it ran, False the spec turned it off
    # (sizes.cross_tiles: false), None the kernel has no parallel loop a size sets
    cross_tiles: Optional[bool] = None
    notes: list[str] = field(default_factory=list)  # what the cases cover and do not (crossing, sampling)
    code: str = ""  # set when every failing case is the original's (harness.redraw): no input it accepts

    def worst(self) -> Optional[OutputCheck]:
        fails = [o for c in self.cases for o in c.outputs if not o.passed]
        return fails[0] if fails else None


@dataclass
class Timing:
    variant: str  # 'fortran-serial', 'fortran-openmp', 'kokkos-serial', 'kokkos-openmp', 'kokkos-cuda'
    threads: int
    sizes: dict[str, int]
    median_s: float
    spread_s: float  # (max - min) of the repeats after warm-up, or IQR
    repeats: int
    kernel_only: bool = True  # False: includes host<->device copies
    gbytes_per_s: Optional[float] = None
    gflops: Optional[float] = None
    roofline_fraction: Optional[float] = None  # of the machine's measured bandwidth (or peak)
    # the sizes (and stride values) at which this build was verified on this backend before
    # it was timed; None for the original Fortran (it is the reference) and for timings
    # from before this was recorded
    proven_sizes: Optional[dict[str, int]] = None
    proof: str = ""  # the proof in words: "verified at the timing sizes (seed S, all N elements compared)"
