"""Each translation feature, proven: the rules port of a small kernel reproduces gfortran's
build of the original on fresh random inputs (harness differential test), on the Serial and
OpenMP backends. Features are grouped into few kernels to keep the builds few:

  basics.f90  stats    several reductions (sum, max, prod) with the values before the loop, **2;
                       a recurrence kept serial in a single-iteration kernel
              bits     iand/ior/ieor/not, ishft/shiftl/shiftr (logical, by the whole bit size),
                       ibits/ibset/ibclr/btest
              dtctl    a minloc reduction whose value is computed first in private scalars
              firstloc the index of the first minimum / maximum read through itself (x(k) < x(m))
              strided  induction variables (BLAS strides, negative strides from the far end)
              mixed    intrinsics: abs, mod, modulo, sign, min(3 args), nint, anint, aint, sqrt, real(,8), ** int
                       exponents (k**2, 2.0d0**(-k)), non-1 lower bounds, a private scalar
  arrays.f90  arrsyn   array syntax, WHERE/ELSEWHERE, sum/maxval/dot_product, MDRange
              smooth   a host time loop launching MDRange kernels, halo lower bounds
  control.f   ctrl     GOTO structuring (early RETURN, IF/ELSE by GOTOs, GOTO to a DO's end),
                       arithmetic IF + backward GOTO, an inlined FUNCTION, a DO with a step
  types.f90   cplx     complex(8), conjg/aimag/cmplx/abs, SELECT CASE, LOGICAL argument
              scatter  atomics for scattered updates (real(4)), a reduction with an integer count
              zsums    two complex sums in one loop: one reducer of Kokkos::complex fields
  arrays.f90  matvt    TeamPolicy: a team per column, TeamThreadRange reduction (team_reductions)
  norms.f     sqnorm   section reductions (rms(m) summed, big(m) a max, under inner component
                       loops: one MDRange reduce with a pf::Private accumulator per thread); a
                       scratch array a called routine fills, private to each iteration
              psmooth  line buffers filled over part of their extent (i1 = 1, n1 of r1(40)) and
                       read inside that part: private, the nest one MDRange
  scratch.f   lsweep   a COMMON work array filled at every (j, k) and read after the routine:
                       private, the last iteration writing through (pf::Scratch); the
                       block's final contents are compared like every output
  linesolve.f xsweep   COMMON work arrays filled over i = 0, gp(1) - 1 at every (j, k) and read
                       at i + 1 for i up to nx2, another COMMON member: the drawn cases read
                       past what the iteration wrote, which sees the block as it was before
                       the loop (pf::BoxScratch), the last iteration writing through
              xnorm    a section reduction over a band whose bounds read COMMON gp: computed
                       before the policy, which the host builds
              xsteps   the same bounds inside a time loop on the host, computed before each kernel
  blocks.f    bsolve   a work array of blocks set up per (j, k) by a helper (end rows) and a
                       nest (inner rows), read and updated through helpers given single
                       blocks by element: private, (j, k) one MDRange calling device functions
              csolve   the same array in COMMON: the helpers' writes the same in every
                       iteration, the last one writing through
  lastval.f   xtemps   COMMON temporaries, a dummy and a local assigned in every iteration and
                       read after the loop: private, the last iteration handing its values on
              dsolve   csolve's line solves with COMMON temporaries per point, an end-row helper
                       addressing its last row through a local set once (l = isz) and an
                       elimination over the rows right of the pivot (n = l + 1, 3): one
                       MDRange, the work array written through, the temporaries handed on
  trisolve.f  ltsolv   a forward substitution: x(i) summed over j < i while x(j) is read, the
                       loop over j a parallel_reduce into a scalar set from x(i) first
  turn.f      colupd   a serial loop over columns around a parallel loop over rows,
                       interchanged: one kernel over the rows, temp recomputed per (i, j)
              colup2   the same with two scalars per column and two updates per row: on
                       the host four columns go through the rows at a time (unroll and jam)
              colrec   a recurrence down each column: one kernel over the columns
  dispatch.f  factr    a GO TO search loop entered at three labels (arithmetic IFs, a DATA
                       table): a dispatch loop over numbered blocks, then a parallel loop
  deposit.f90 deposit  a cloud-in-cell deposit on a 2-D grid with lower bounds 0: four scattered
                       updates per particle; on OpenMP per-thread copies of the grid summed
                       after the kernel when the grid is small (pf::Scatter), else atomics
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from port_fortran.fortran import parse_file
from port_fortran.records import TranslateOptions
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "translate"

pytestmark = pytest.mark.integration

CASES = [
    ("basics.f90", "stats"),
    ("basics.f90", "mixed"),
    ("basics.f90", "strided"),
    ("basics.f90", "bits"),
    ("basics.f90", "dtctl"),
    ("basics.f90", "firstloc"),
    ("arrays.f90", "arrsyn"),
    ("arrays.f90", "smooth"),
    ("control.f", "ctrl"),
    ("types.f90", "cplx"),
    ("types.f90", "scatter"),
    ("arrays.f90", "matvt"),  # with TranslateOptions(team_reductions=True): TeamPolicy
    ("norms.f", "sqnorm"),
    ("norms.f", "psmooth"),
    ("scratch.f", "lsweep"),
    ("linesolve.f", "xsweep"),
    ("linesolve.f", "xnorm"),
    ("linesolve.f", "xsteps"),
    ("blocks.f", "bsolve"),
    ("blocks.f", "csolve"),
    ("lastval.f", "xtemps"),
    ("lastval.f", "dsolve"),
    ("trisolve.f", "ltsolv"),
    ("turn.f", "colupd"),
    ("turn.f", "colup2"),
    ("turn.f", "colrec"),
    ("dispatch.f", "factr"),
    ("stfunc.f", "cmaxab"),  # statement functions inlined
    ("stfunc.f", "wnorm"),   # ... inside a sum
    ("halo.f90", "uhalo"),
    ("sections.f90", "secw"),
    ("sections.f90", "secl"),
    ("deposit.f90", "deposit"),
    ("types.f90", "zsums"),
]
OPTIONS = {"matvt": TranslateOptions(team_reductions=True)}

# spec refinements (what a user would write): sizes the inference cannot guess, and which
# outputs are sums a parallel port may reorder
SPEC_EDITS = {
    # the inference takes n for a flag (compared with 1): numbers that take every path of
    # the search (table divisors, odd divisors past it, a prime, a repeated factor)
    "factr": {"args": {"n": {"role": "scalar", "values": [360, 97, 1001, 2, 1]}}},
    "arrsyn": {"args": {"n": {"role": "size"}},
               "sizes": {"correctness": [{"n": 1, "m": 1}, {"n": 7, "m": 5}, {"n": 33, "m": 17}]},
               "reduction": ["s", "d"]},
    "stats": {"reduction": ["s", "p"]},
    "strided": {"reduction": ["dot"]},
    "scatter": {"reduction": ["hist", "vsum"]},
    "zsums": {"reduction": ["sx", "sy"]},
    # many particles on a small grid (per-thread copies on OpenMP), few on a large one (atomics)
    "deposit": {"sizes": {"correctness": [{"np": 1, "nx": 1, "ny": 1}, {"np": 400, "nx": 3, "ny": 4},
                                          {"np": 5, "nx": 30, "ny": 20}]},
                "reduction": ["rho"]},
    "sqnorm": {"reduction": ["rms"]},
    "xnorm": {"reduction": ["rms"]},
}


def _harness(tmp_path, file, name):
    from port_fortran.harness import Harness

    sf = parse_file(str(DATA / file))
    k = next(k for k in sf.kernels if k.name == name)
    port = translate_kernel(k, sf, OPTIONS.get(name))
    d = tmp_path / name
    write_port(port, d)
    h = Harness(k, sf, d)
    edits = SPEC_EDITS.get(name)
    if edits:
        h.spec  # infer and write the spec, then refine it as a user would
        data = yaml.safe_load(h.spec_path.read_text())
        for arg, upd in edits.get("args", {}).items():
            data["args"][arg] = {kk: vv for kk, vv in data["args"][arg].items() if kk in ("intent",)} | upd
        if "sizes" in edits:
            data["sizes"]["correctness"] = edits["sizes"]["correctness"]
            data["sizes"]["timing"] = edits["sizes"]["correctness"][-1]
        for out in edits.get("reduction", []):
            data["tolerance"][out]["reduction"] = True
        h.spec_path.write_text(yaml.safe_dump(data, sort_keys=False))
        h.reload_spec()
    return port, h


@pytest.mark.parametrize("file,name", CASES, ids=[c[1] for c in CASES])
def test_port_matches_original(tmp_path, file, name):
    port, h = _harness(tmp_path, file, name)
    for backend in ("serial", "openmp"):
        b = h.build(backend)
        assert b.ok, f"{name} [{backend}] build failed:\n{b.condensed}"
        v = h.verify(backend)
        assert v.passed, f"{name} [{backend}] ({', '.join(port.patterns)}): {v.reason}"
        assert v.cases and all(c.outputs for c in v.cases)
