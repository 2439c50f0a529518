"""The rules debugger's variant order and the optimizer's variant list."""
from port_fortran.agents import debugger, optimizer
from port_fortran.fortran import ir
from port_fortran.records import TranslateOptions


def kernel(nested=False, scattered=False):
    inner = ir.Do(var="i", start=ir.Literal(1), end=ir.Name("n"), line=12,
                  info=ir.LoopInfo(parallel=True, reductions=[ir.Reduction("s", "sum", 13)]))
    outer = ir.Do(var="j", start=ir.Literal(1), end=ir.Name("m"), line=10, body=[inner],
                  info=ir.LoopInfo(parallel=True, tightly_nested_parallel=2 if nested else 1,
                                   scattered=["y"] if scattered else []))
    return ir.Kernel("k", "subroutine", "k.f", 1, 20, body=[outer])


def test_offending_loop_first_then_one_by_one_then_all_serial():
    k = kernel()
    names = [n for n, _ in debugger.candidates(k, None, {"stage": "run", "line": 12, "file": "k.f"})]
    assert names[0] == "serial-L12"
    assert names[-1] == "all-serial"
    c = dict(debugger.candidates(k, None, {"stage": "run"}))
    assert c["serial-L10"].serial_loops == {10} and c["all-serial"].serial_loops == {10, 12}


def test_atomics_when_scattered_updates_and_atomics_off():
    k = kernel(scattered=True)
    names = [n for n, _ in debugger.candidates(k, TranslateOptions(atomic_scatter=False), {"stage": "run"})]
    assert names[0] == "atomics"


def test_last_round_goes_straight_to_all_serial_and_nothing_left_after_it():
    k = kernel()
    name, o = debugger.next_rules_variant(k, None, {"stage": "run"}, [], rounds_left=1)
    assert name == "all-serial"
    assert debugger.next_rules_variant(k, o, {"stage": "run"}, ["all-serial"], rounds_left=2) is None


def test_optimizer_variants_apply_only_where_they_matter():
    flat = optimizer.variants(kernel(nested=False), None, 5)
    assert [n for n, _ in flat] == ["team-reductions", "kokkos-policies"]
    assert flat[0][1].team_reductions and not flat[1][1].host_loops
    # device backends only: the host loops do not exist there
    assert [n for n, _ in optimizer.variants(kernel(nested=False), None, 5, ["cuda"])] == ["team-reductions"]
    names = [n for n, _ in optimizer.variants(kernel(nested=True), None, 10)]
    assert names[:2] == ["tile-32x8", "tile-64x4"] and "iterate-right" in names and "no-mdrange" in names
    assert len(optimizer.variants(kernel(nested=True), None, 2)) == 2


def test_scattered_updates_get_a_measured_copies_variant_where_openmp_runs():
    """Whether per-thread copies beat atomics depends on how the data collides (a histogram
    of 100 K bins: 3x faster with copies; of 5.6 M bins: 2x slower), so beside the size rule
    of pf::Scatter the optimizer times the copies whatever the size, where Kokkos OpenMP runs."""
    names = [n for n, _ in optimizer.variants(kernel(scattered=True), None, 10, ["serial", "openmp"])]
    assert "scatter-copies" in names
    o = dict(optimizer.variants(kernel(scattered=True), None, 10, ["serial", "openmp"]))["scatter-copies"]
    assert o.scatter_copies and o.host_loops
    for backends in (["serial"], ["cuda"]):
        assert "scatter-copies" not in [n for n, _ in optimizer.variants(kernel(scattered=True), None, 10, backends)]
    assert "scatter-copies" not in [n for n, _ in optimizer.variants(kernel(), None, 10, ["openmp"])]


def test_compile_error_line_maps_to_the_fortran_loop():
    cpp = ('#include "k.kokkos.hpp"\nvoid k_views() {\n  // line 10: do j -> mdrange\n'
           '  Kokkos::parallel_for("k:L10", p, KOKKOS_LAMBDA(int j) {\n    bad;\n  });\n'
           '  // line 12: do i -> parallel_for\n  x;\n}\n')
    assert debugger.fortran_loop_line(cpp, 5) == 10
    assert debugger.fortran_loop_line(cpp, 8) == 12
    assert debugger.fortran_loop_line(cpp, 1) is None
    names = [n for n, _ in debugger.candidates(kernel(), None, {"stage": "compile", "fortran_line": 12})]
    assert names[0] == "serial-L12"


def test_on_host_backends_kokkos_policies_come_first_and_tiles_use_them():
    """The compat header's host loops ignore tile sizes: with only host backends a tile
    variant is Kokkos' MDRange with that tile, and Kokkos' own policies are tried first."""
    v = optimizer.variants(kernel(nested=True), None, 10, ["serial", "openmp"])
    assert v[0][0] == "kokkos-policies" and not v[0][1].host_loops
    tiles = [o for n, o in v if n.startswith("tile-")]
    assert tiles and all(not o.host_loops for o in tiles)
    # with a device backend the tiles matter there, the host loops stay
    v = optimizer.variants(kernel(nested=True), None, 10, ["serial", "cuda"])
    assert all(o.host_loops for n, o in v if n.startswith("tile-")) and v[-1][0] == "kokkos-policies"


def test_a_build_failure_no_parser_reads_still_quotes_the_compilers_error():
    """A hybrid port's kept Fortran that gfortran rejects: the report says which line and
    what gfortran said, not only 'the build failed'."""
    from types import SimpleNamespace

    from port_fortran.agents.debugger import failure_from_build

    log = ("../../dsinqf.f:18:59:\n\n   18 |       CALL F(N, X, UBOUND(X, 1))\n      |                 1\n"
           "Error: 'dim' argument of 'ubound' intrinsic at (1) is not a valid dimension index\n")
    f = failure_from_build(SimpleNamespace(diagnostics=[], backend="serial", condensed=log))
    assert f["code"] == "build-failed"
    assert f["message"] == "../../dsinqf.f:18:59: Error: 'dim' argument of 'ubound' intrinsic at (1) is not a valid dimension index"
    assert failure_from_build(SimpleNamespace(diagnostics=[], backend="serial", condensed=""))["message"] == "the build failed"
