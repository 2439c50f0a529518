"""Loops independent only for some run-time values, proven in both versions.

A subscript with a symbolic coefficient or offset is never assumed non-zero or large: the
loop gets a condition (``incy /= 0``, ``koff == 0 .or. abs(koff) >= n``, ``abs(lda) >= m``),
the port runs it in parallel when the condition holds where the loop starts and serially
otherwise, and the harness draws values on both sides (zero and negative strides, small and
large offsets) where the original accepts them. Each kernel of ``data/translate/versions.f``
is verified on Serial and OpenMP; every case's values say which version ran, and both must
have run with more than one iteration. With ``incy = 0`` and millions of iterations under
OpenMP threads, an unguarded parallel loop races on ``y(1)`` (measured: it fails in most
runs); the versioned port gives the original's answer.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from port_fortran.fortran import ir, parse_file
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "translate"
SOURCE = DATA / "versions.f"
RACE_N = 4_000_000  # iterations of the zero-stride race case (seconds on 2 cores)


def harness(tmp_path, name: str, threads=None):
    from port_fortran.harness import Harness

    sf = parse_file(str(SOURCE))
    k = next(k for k in sf.kernels if k.name == name)
    port = translate_kernel(k, sf)
    write_port(port, tmp_path / name)
    return port, Harness(k, sf, tmp_path / name, threads=threads), k


def conditions(k: ir.Kernel) -> dict[int, ir.Expr]:
    return {d.line: d.info.condition for d in k.loops() if d.info.condition is not None}


def versions_run(verdict, cond: ir.Expr) -> set[bool]:
    """Which versions the cases selected: the condition evaluated with each case's sizes
    and values (cases with more than one iteration only)."""
    out = set()
    for c in verdict.cases:
        if max(c.sizes[n] for n in ("n", "m") if n in c.sizes) > 1:
            out.add(bool(ir.evaluate(cond, dict(c.sizes))))
    return out


def zero_stride_race_case(h, n: int = RACE_N) -> None:
    """Edit the spec as a user would: one size set with ``n`` iterations, incx = incy = 0
    (every iteration updates y(1) with x(1): little data, many conflicting updates)."""
    h.spec  # inferred and written first
    data = yaml.safe_load(h.spec_path.read_text())
    data["sizes"]["correctness"] = [{"n": n}]
    data["args"]["incx"]["values"] = [0]
    data["args"]["incy"]["values"] = [0]
    h.spec_path.write_text(yaml.safe_dump(data, sort_keys=False))
    h.reload_spec()


@pytest.mark.integration
@pytest.mark.parametrize("name", ["vaxpy", "vsym"])
def test_both_versions_are_proven_on_serial_and_openmp(tmp_path, name):
    port, h, k = harness(tmp_path, name)
    conds = conditions(k)
    assert conds and "versioned" in port.patterns
    for backend in ("serial", "openmp"):
        b = h.build(backend)
        assert b.ok, f"{name} [{backend}] build failed:\n{b.condensed}"
        v = h.verify(backend, seeds=2)
        assert v.passed, f"{name} [{backend}]: {v.reason}"
        for line, cond in conds.items():
            assert versions_run(v, cond) == {True, False}, (line, [c.label for c in v.cases])
    if name == "vaxpy":
        # the values drawn: zero and negative strides besides the positive ones
        assert {-2, 0} <= set(h.spec.args["incy"].values) and {-2, 0} <= set(h.spec.args["incx"].values)
        # a zero stride with millions of conflicting updates under OpenMP threads
        assert h.threads >= 2
        zero_stride_race_case(h)
        v = h.verify("openmp")
        assert v.passed, v.reason
        assert [(c.sizes["n"], c.sizes["incy"]) for c in v.cases if c.kind != "cross-tiles"] == [(RACE_N, 0)]


@pytest.mark.integration
def test_the_zero_stride_case_shows_the_race_of_an_unversioned_port(tmp_path):
    """The race case above can fail: the same loop ported as a plain parallel_for (its
    condition dropped, as the analysis did before) loses updates of y(1) under OpenMP."""
    import copy

    from port_fortran.harness import Harness

    sf = parse_file(str(SOURCE))
    k = next(k for k in sf.kernels if k.name == "vaxpy")
    racy = copy.deepcopy(k)
    (d,) = [d for d in racy.loops() if d.info.condition is not None]
    d.info.condition = None
    d.info.reasons = [r for r in d.info.reasons if r.code != "conditional-independence"]
    port = translate_kernel(racy, sf)
    assert "versioned" not in port.patterns and "serial" not in port.patterns
    write_port(port, tmp_path / "racy")
    h = Harness(k, sf, tmp_path / "racy")
    assert h.threads >= 2
    zero_stride_race_case(h)
    data = yaml.safe_load(h.spec_path.read_text())
    data["sizes"]["correctness"] = [{"n": RACE_N}] * 3
    h.spec_path.write_text(yaml.safe_dump(data, sort_keys=False))
    h.reload_spec()
    b = h.build("openmp")
    assert b.ok, b.condensed
    v = h.verify("openmp")
    # a run where the OS kept one thread waiting until the other was done can pass; the
    # verdict fails as soon as one case shows the race
    assert not v.passed and "y" in v.reason
