"""The rules translator's decisions: which pattern each loop gets, the knobs of
TranslateOptions, refusals with codes and lines, the structuring rewrites and the C++
expression printer. Pure Python (no compiler)."""
from __future__ import annotations

import copy

import re
from pathlib import Path

import pytest

from port_fortran.fortran import ir, parse_file
from port_fortran.fortran.render import expr_str
from port_fortran.records import TranslateOptions, TranslationRefused
from port_fortran.translate import translate_kernel, write_port
from port_fortran.translate.cexpr import ExprPrinter
from port_fortran.translate.structure import restructure
from port_fortran.translate.symbols import Refusal, build_symbols

DATA = Path(__file__).parent / "data" / "translate"
SAMPLES = Path(__file__).parent.parent / "fortran_kernels"


def _kernel(file: str, name: str):
    sf = parse_file(str(DATA / file))
    return next(k for k in sf.kernels if k.name == name), sf


def _port(file: str, name: str, options=None):
    k, sf = _kernel(file, name)
    return translate_kernel(k, sf, options)


def _views_body(port, name):
    cpp = port.files[f"{name}.kokkos.cpp"]
    return cpp[cpp.index(f"{name}_kokkos_views("):cpp.index('extern "C"')]


# ------------------------------------------------------------------ patterns


def test_axpy_is_one_parallel_for_with_the_early_return_on_the_host():
    port = _port("basics.f90", "axpy")
    assert port.patterns == ["parallel_for"]
    assert port.entry == "axpy_kokkos"
    assert set(port.files) == {"axpy.kokkos.cpp", "axpy.kokkos.hpp", "axpy_kokkos_mod.f90",
                               "pf_kokkos_compat.hpp", "pf_strings.hpp", "pf_runtime.hpp", "CMakeLists.txt"}
    body = _views_body(port, "axpy")
    assert "return;" in body.split("parallel_for")[0]  # IF (n <= 0) RETURN before the kernel
    assert "y(i - 1) = y(i - 1) + a * x(i - 1);" in body  # literal lower bound folded
    assert len(port.notes) == 1 and port.notes[0].startswith("line 11:")


def test_several_reductions_share_one_reducer_and_combine_with_the_values_before_the_loop():
    port = _port("basics.f90", "stats")
    assert port.patterns == ["reduce", "scan"]  # the second loop: a prefix sum (test_scan.py)
    cpp = port.files["stats.kokkos.cpp"]
    assert "struct reducer_L28" in cpp and "PF_VOLATILE_JOIN(value_type)" in cpp
    assert "s = s + pf_red.s;" in cpp
    assert "smax = pf::max<double>(smax, pf_red.smax);" in cpp
    assert "p = p * pf_red.p;" in cpp


def test_induction_variables_are_computed_from_the_loop_index():
    port = _port("basics.f90", "strided")
    # the second loop writes y(iy): parallel only if incy /= 0 (versioned), serial otherwise
    assert port.patterns == ["reduce", "parallel_for", "serial", "versioned"]
    cpp = port.files["strided.kokkos.cpp"]
    assert "int ix = pf_ix0 + static_cast<int>((i - 1)) * (incx);" in cpp
    assert "iy = pf_iy0 + static_cast<int>(pf::trip(1, n, 1)) * (incy);" in cpp  # iy is read after the loop
    assert all("induction" in n for n in port.notes)


def test_halo_faces_under_branches_on_flag_arrays_are_kernels():
    # if (fields(F_DENS) == 1) / if (neighbours(CH_BOTTOM) == EXT_FACE) around each face: the
    # conditions are computed first (pf_c<n>), the host takes the branches and launches
    # every face as an MDRange kernel instead of running them all in one serial kernel
    port = _port("halo.f90", "uhalo")
    assert port.patterns == ["mdrange", "serial"]
    body = _views_body(port, "uhalo")
    assert body.count("pf::parallel_for(") == 7 and "if (pf_c" in body


def test_recurrence_stays_serial_in_a_single_iteration_kernel():
    port = _port("scans.f", "scanp")  # a running product: not a prefix sum
    assert "pf::single_for(" in port.files["scanp.kokkos.cpp"]
    assert port.notes[0].startswith("line 51:") and "scalar-dependence" in port.notes[0]
    assert "t = t * x(i - 1);" in port.files["scanp.kokkos.cpp"]


def test_tight_nest_is_mdrange_with_the_contiguous_index_first_inside_a_host_time_loop():
    port = _port("arrays.f90", "smooth")
    assert port.patterns == ["mdrange"]
    body = _views_body(port, "smooth")
    assert "for (it = 1; it <= nsteps; ++it)" in body
    assert body.count("KOKKOS_LAMBDA(const int i, const int j)") == 2
    assert any("host loop" in n for n in port.notes)


def test_array_syntax_where_and_array_reductions_become_loops():
    port = _port("arrays.f90", "arrsyn")
    assert set(port.patterns) == {"mdrange", "parallel_for", "reduce"}
    body = _views_body(port, "arrsyn")
    assert body.count("pf::parallel_reduce") == 3  # sum, maxval, dot_product
    assert "Kokkos::Max<double>" in body
    assert "} else {" in body  # ELSEWHERE


def test_scattered_updates_get_atomics_or_stay_serial_by_option():
    port = _port("types.f90", "scatter")
    assert "atomic" in port.patterns and "reduce" in port.patterns
    assert "pf_sc_hist.add(&hist(k - 1), v(i - 1));" in port.files["scatter.kokkos.cpp"]
    port2 = _port("types.f90", "scatter", TranslateOptions(atomic_scatter=False))
    assert "atomic" not in port2.patterns and "serial" in port2.patterns
    assert "atomic_add" not in port2.files["scatter.kokkos.cpp"] and "pf_sc_" not in port2.files["scatter.kokkos.cpp"]


def test_options_force_serial_loops_and_turn_mdrange_off():
    port = _port("basics.f90", "axpy", TranslateOptions(serial_loops={11}))
    assert port.patterns == ["serial"]
    assert "translate options" in port.notes[0]
    port = _port("arrays.f90", "smooth", TranslateOptions(mdrange=False))
    assert port.patterns == ["parallel_for"]
    port = _port("arrays.f90", "smooth", TranslateOptions(tile=(8, 4)))
    assert "{8, 4})" in port.files["smooth.kokkos.cpp"]
    port = _port("arrays.f90", "smooth", TranslateOptions(iterate_left=False))
    assert "KOKKOS_LAMBDA(const int j, const int i)" in port.files["smooth.kokkos.cpp"]


def test_team_policy_for_inner_reductions_by_option():
    port = _port("arrays.f90", "matvt")
    assert port.patterns == ["parallel_for"]  # default: inner dot product sequential
    port = _port("arrays.f90", "matvt", TranslateOptions(team_reductions=True))
    assert port.patterns == ["team"]
    cpp = port.files["matvt.kokkos.cpp"]
    assert "Kokkos::TeamPolicy<pf::ExecSpace>" in cpp and "Kokkos::TeamThreadRange(pf_team, 1, pf::upto(1, m))" in cpp
    assert "Kokkos::single(Kokkos::PerTeam(pf_team)" in cpp
    assert len(port.notes) == 2


def test_first_occurrence_maxloc_is_a_deterministic_reduction():
    sf = parse_file(str(SAMPLES / "reduce.f"))
    k = next(k for k in sf.kernels if k.name == "idmaxl")
    port = translate_kernel(k, sf)
    assert "reduce" in port.patterns
    cpp = port.files["idmaxl.kokkos.cpp"]
    assert "struct locreducer_L33" in cpp
    assert "(src.val == dest.val && src.loc < dest.loc)" in cpp  # ties: lowest index, as the loop
    assert "if (pf_red.val > xmax)" in cpp


def test_gotos_arithmetic_if_and_inlined_function():
    port = _port("control.f", "ctrl")
    body = _views_body(port, "ctrl")
    cpp = port.files["ctrl.kokkos.cpp"]
    assert "KOKKOS_INLINE_FUNCTION double fpoly_fn(" in cpp
    assert "fpoly_fn(x(i - 1), 1.0, 0.5)" in body
    assert "} else {" in body  # IF (MODE.EQ.1) GO TO 20 ... GO TO 40 -> if/else
    assert "while (it - nsteps < 0)" in body  # arithmetic IF + backward GOTO -> while
    # three-way arithmetic IF: nested IF blocks, the RETURN between the targets kept
    assert "if (nsteps - 2 >= 0) {" in body and "if (nsteps - 2 != 0) {" in body
    # IF / ELSE IF chain of GOTOs to the statement after it: nested if/else
    assert "if (mode == 4) {" in body and "if (mode == 2) {" in body and "if (nsteps <= 5) {" in body
    assert "pf::trip(2, n, 3)" in body  # DO with a step: normalised index
    assert "goto" not in body
    lines = {int(m) for m in re.findall(r"ctrl:L(\d+)", body)}
    assert {23, 28, 33, 36} <= lines


def test_complex_logical_select_case():
    port = _port("types.f90", "cplx")
    body = _views_body(port, "cplx")
    assert port.patterns == ["parallel_for"]
    assert "Kokkos::complex<double>(2.0, -1.0)" in body
    assert "pf::conj(z(i - 1))" in body and ".imag()" in body and "pf::cabs(z(i - 1))" in body
    assert "i % 3 == 0" in body
    hpp = port.files["cplx.kokkos.hpp"]
    assert "const Kokkos::complex<double>* z" in hpp and "const int* flag" in hpp
    assert "signed char* big" in hpp  # logical(c_bool): one byte, as the caller lays it out
    assert "logical(1), intent(out) :: big(n)" in port.files["cplx_kokkos_mod.f90"]


def test_function_kernel_returns_its_value_through_entry_and_module():
    port = _port("control.f", "fpoly")
    hpp = port.files["fpoly.kokkos.hpp"]
    assert 'extern "C" double fpoly_kokkos(const double* x' in hpp
    mod = port.files["fpoly_kokkos_mod.f90"]
    assert 'function fpoly_kokkos(x, c0, c1) bind(C, name="fpoly_kokkos") result(res)' in mod
    assert "real(c_double) :: res" in mod


def test_module_interface_keeps_shapes_and_lower_bounds():
    port = _port("arrays.f90", "smooth")
    mod = port.files["smooth_kokkos_mod.f90"]
    assert "integer(c_int), intent(in) :: n" in mod
    assert "real(c_double), intent(inout) :: u(0:(n + 1), 0:(m + 1))" in mod
    assert mod.index(":: n") < mod.index(":: u(")  # sizes declared before the arrays using them


def test_no_std_calls_in_generated_kernels():
    """Nothing host-only inside lambdas: all math goes through the compat header."""
    for file in ("basics.f90", "arrays.f90", "control.f", "types.f90"):
        sf = parse_file(str(DATA / file))
        for k in sf.kernels:
            cpp = translate_kernel(k, sf).files[f"{k.name}.kokkos.cpp"]
            assert "std::" not in cpp, k.name
            assert "printf" not in cpp


def test_every_loop_gets_a_note():
    for file in ("basics.f90", "arrays.f90", "types.f90"):
        sf = parse_file(str(DATA / file))
        for k in sf.kernels:
            port = translate_kernel(k, sf)
            noted = {int(m) for n in port.notes for m in re.findall(r"^line (\d+):", n)}
            assert {d.line for d in k.loops()} <= noted, (k.name, port.notes)


# ------------------------------------------------------------------ refusals


def _mini_kernel(body, args=None, **kw):
    args = args if args is not None else [
        ir.Argument("n", ir.INTEGER, intent="in", position=0),
        ir.Argument("x", ir.REAL8, dims=[ir.Dim(None, ir.Name("n", ftype=ir.INTEGER))], intent="inout", position=1),
    ]
    locs = {"i": ir.Variable("i", ir.INTEGER)}
    return ir.Kernel("mini", "subroutine", "mini.f90", 1, 20, args=args, locals=locs, body=body, **kw)


def _loop(body, line=3, parallel=True, **info):
    return ir.Do("i", ir.Literal(1, "1", ftype=ir.INTEGER), ir.Name("n", ftype=ir.INTEGER), body=body, line=line,
                 info=ir.LoopInfo(parallel=parallel, **info))


def _xi():
    return ir.ArrayRef("x", [ir.Name("i", ftype=ir.INTEGER)], ftype=ir.REAL8)


def test_hand_built_ir_translates():
    k = _mini_kernel([_loop([ir.Assign(_xi(), ir.BinOp("*", _xi(), ir.Literal(2.0, "2.0d0"), ftype=ir.REAL8), line=4)])])
    port = translate_kernel(k, None)
    assert port.patterns == ["parallel_for"]
    assert "x(i - 1) = x(i - 1) * 2.0;" in port.files["mini.kokkos.cpp"]


def test_refusals_carry_code_and_line():
    k = _mini_kernel([_loop([ir.CallStmt("other", [_xi()], line=4)], parallel=False)], calls=["other"])
    with pytest.raises(TranslationRefused) as e:
        translate_kernel(k, None)
    assert e.value.diagnostics[0].code == "call-to-unknown" and e.value.diagnostics[0].line == 4

    k = _mini_kernel([ir.Unsupported("io-in-kernel", "WRITE statement", line=7)],
                     unsupported=[ir.Unsupported("io-in-kernel", "WRITE statement", line=7)])
    with pytest.raises(TranslationRefused) as e:
        translate_kernel(k, None)
    assert (e.value.diagnostics[0].code, e.value.diagnostics[0].line) == ("io-in-kernel", 7)

    k = _mini_kernel([], commons=[ir.CommonBlock("blk", ["a", "b"], line=5)])
    with pytest.raises(TranslationRefused) as e:
        translate_kernel(k, None)
    assert e.value.diagnostics[0].code == "common-block" and "blk" in e.value.diagnostics[0].message

    # backward unconditional GOTO: not structurable
    body = [ir.Continue(line=3, label=10), ir.Assign(ir.Name("i", ftype=ir.INTEGER), ir.Literal(1, "1"), line=4),
            ir.Goto(10, line=5)]
    with pytest.raises(TranslationRefused) as e:
        translate_kernel(_mini_kernel(body), None)
    assert (e.value.diagnostics[0].code, e.value.diagnostics[0].line) == ("unstructured-goto", 5)


def test_assumed_size_without_access_bounds_is_refused_with_unknown_extent():
    args = [ir.Argument("n", ir.INTEGER, intent="in", position=0),
            ir.Argument("x", ir.REAL8, dims=[ir.Dim(None, None)], intent="inout", position=1)]
    k = _mini_kernel([_loop([ir.Assign(_xi(), ir.Literal(0.0, "0.0d0"), line=4)])], args=args)
    with pytest.raises(TranslationRefused) as e:
        translate_kernel(k, None)
    assert e.value.diagnostics[0].code == "unknown-extent"
    # with the bounds the analysis provides, the extent comes from them
    args[1].access_bounds = [(ir.Literal(1, "1", ftype=ir.INTEGER), ir.Name("n", ftype=ir.INTEGER))]
    port = translate_kernel(k, None)
    assert "h_x(x, pf::extent(1, n))" in port.files["mini.kokkos.cpp"]


# ------------------------------------------------------------------ structure


def test_forward_goto_becomes_if_block():
    c = ir.BinOp(">", ir.Name("n", ftype=ir.INTEGER), ir.Literal(3, "3", ftype=ir.INTEGER), ftype=ir.LOGICAL)
    a1 = ir.Assign(ir.Name("i", ftype=ir.INTEGER), ir.Literal(1, "1"), line=3)
    body = [ir.If(branches=[(c, [ir.Goto(20, line=2)])], line=2), a1, ir.Continue(line=4, label=20)]
    out = restructure(body)
    assert isinstance(out[0], ir.If) and out[0].branches[0][1] == [a1]
    cond = out[0].branches[0][0]
    assert isinstance(cond, ir.BinOp) and cond.op == "<="  # integer test flipped exactly
    assert not any(isinstance(s, ir.Goto) for s in ir.walk(out))


def test_goto_to_end_of_labelled_do_becomes_cycle():
    c = ir.BinOp(">", ir.Name("n", ftype=ir.INTEGER), ir.Literal(3, "3", ftype=ir.INTEGER), ftype=ir.LOGICAL)
    inner_if = ir.If(branches=[(c, [ir.Assign(ir.Name("n"), ir.Literal(1, "1"), line=4), ir.Goto(10, line=5)])], line=4)
    after = ir.Assign(ir.Name("m"), ir.Literal(2, "2"), line=6)
    do = ir.Do("i", ir.Literal(1, "1"), ir.Name("n"), body=[inner_if, after, ir.Continue(line=7, label=10)],
               end_label=10, line=3)
    out = restructure([do])
    assert any(isinstance(s, ir.Cycle) for s in ir.walk(out))
    assert not any(isinstance(s, ir.Goto) for s in ir.walk(out))
    # the GOTO lands on the statement right after the IF: the end of its branch
    do = ir.Do("i", ir.Literal(1, "1"), ir.Name("n"), body=[copy.deepcopy(inner_if), ir.Continue(line=6, label=10)],
               end_label=10, line=3)
    out = restructure([do])
    assert not any(isinstance(s, (ir.Goto, ir.Cycle)) for s in ir.walk(out))
    assert [type(s).__name__ for s in out[0].body[0].branches[0][1]] == ["Assign"]


# ------------------------------------------------------------------ expressions


def _printer():
    k = _mini_kernel([])
    k.locals.update({"r": ir.Variable("r", ir.REAL4), "d": ir.Variable("d", ir.REAL8),
                     "j": ir.Variable("j", ir.INTEGER)})
    return ExprPrinter(build_symbols(k))


def N(name, t):
    return ir.Name(name, ftype=t)


def test_expression_typing_matches_fortran():
    p = _printer()
    i, j, r, d = N("i", ir.INTEGER), N("j", ir.INTEGER), N("r", ir.REAL4), N("d", ir.REAL8)
    assert p.expr(ir.BinOp("/", i, j)) == "i / j"  # integer division truncates in both
    assert p.expr(ir.BinOp("*", i, d)) == "static_cast<double>(i) * d"
    assert p.expr(ir.BinOp("*", ir.Literal(2, "2"), d)) == "2.0 * d"
    assert p.expr(ir.BinOp("+", r, ir.Literal(0.1, "0.1"))) == "r + 0.1f"  # real(4) literal stays float
    assert p.expr(ir.BinOp("**", d, ir.Literal(2, "2"))) == "d * d"
    assert p.expr(ir.BinOp("**", d, j)) == "pf::ipow(d, j)"
    assert p.expr(ir.BinOp("**", d, r)) == "pf::pow(d, r)"
    assert p.expr(ir.BinOp("-", i, ir.BinOp("-", j, i))) == "i - (j - i)"
    assert p.expr(ir.FuncCall("mod", [i, j], intrinsic=True)) == "i % j"
    assert p.expr(ir.FuncCall("mod", [d, d], intrinsic=True)) == "pf::fmod(d, d)"
    assert p.expr(ir.FuncCall("max", [d, r, ir.Literal(1.0, "1.0d0")], intrinsic=True)) == \
        "pf::max<double>(d, pf::max<double>(r, 1.0))"
    assert p.expr(ir.FuncCall("nint", [d], intrinsic=True)) == "pf::nint(d)"
    assert p.expr(ir.FuncCall("anint", [d], intrinsic=True)) == "pf::anint(d)"
    assert p.expr(ir.FuncCall("dint", [d], intrinsic=True)) == "pf::aint(d)"
    assert p.expr(ir.FuncCall("anint", [r, ir.Literal(8, "8")], intrinsic=True)) == \
        "static_cast<double>(pf::anint(r))"
    assert p.expr(ir.FuncCall("dble", [i], intrinsic=True)) == "static_cast<double>(i)"
    assert p.expr(ir.BinOp("and", ir.UnaryOp("not", ir.BinOp("<", i, j)), ir.BinOp(">=", d, r))) == \
        "!(i < j) && d >= r"
    assert p.expr(ir.ArrayRef("x", [ir.BinOp("+", i, ir.Literal(1, "1"))])) == "x(i)"
    with pytest.raises(Refusal) as e:
        p.expr(ir.FuncCall("besj0", [d], intrinsic=True))
    assert e.value.diagnostic.code == "unsupported-intrinsic"


# ------------------------------------------------------------------ command


def test_translate_command_exit_codes(tmp_path, capsys):
    from port_fortran.cli import main

    assert main(["translate", str(DATA / "basics.f90"), "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "axpy: ported (parallel_for)" in out and (tmp_path / "axpy" / "axpy.kokkos.cpp").is_file()
    assert main(["translate", str(DATA / "basics.f90"), "--kernel", "nosuch", "-o", str(tmp_path)]) == 2
    assert main(["translate", str(tmp_path / "missing.f90"), "-o", str(tmp_path)]) == 2
    bad = tmp_path / "io.f90"
    bad.write_text("subroutine io(n, x)\n  integer n\n  real(8) x(n)\n  write(*,*) x(1)\nend subroutine\n")
    assert main(["translate", str(bad), "-o", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"io: not ported: .*io\.f90:4 \[io-in-kernel\]", out)


def test_write_port_writes_every_file(tmp_path):
    port = _port("basics.f90", "axpy")
    write_port(port, tmp_path / "p")
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == sorted(port.files)


def test_array_assignment_with_overlap_is_refused(tmp_path):
    src = tmp_path / "ov.f90"
    src.write_text("subroutine ov(n, a)\n  integer, intent(in) :: n\n  real(8), intent(inout) :: a(n)\n"
                   "  a(2:n) = a(1:n-1) + 1.0d0\nend subroutine ov\n")
    sf = parse_file(str(src))
    with pytest.raises(TranslationRefused) as e:
        translate_kernel(sf.kernels[0], sf)
    assert (e.value.diagnostics[0].code, e.value.diagnostics[0].line) == ("array-overlap", 4)


def test_scalar_used_after_the_loop_is_handed_on_by_the_last_iteration(tmp_path):
    src = tmp_path / "lv.f90"
    src.write_text("subroutine lv(n, a, t)\n  integer, intent(in) :: n\n  real(8), intent(inout) :: a(n)\n"
                   "  real(8), intent(out) :: t\n  integer :: i\n  do i = 1, n\n    t = a(i) * 2.0d0\n"
                   "    a(i) = t\n  end do\nend subroutine lv\n")
    sf = parse_file(str(src))
    port = translate_kernel(sf.kernels[0], sf)
    cpp = port.files["lv.kokkos.cpp"]
    # t's last value is an output: each iteration has its own t, the last one stores it
    assert port.patterns == ["parallel_for"]
    assert "const bool pf_last = i == n;" in cpp and "double t = pf_first_t;" in cpp
    assert "if (pf_last) pf_last_t() = t;" in cpp and "Kokkos::deep_copy(t, pf_last_t);" in cpp


# ------------------------------------------------------------------ loop versioning


def _plan(k, sf):
    """The planner's nodes for a kernel (as translate_kernel builds them)."""
    import copy

    from port_fortran.translate.lower import lower_arrays
    from port_fortran.translate.plan import Planner

    tab = build_symbols(k, sf)
    body = lower_arrays(restructure(copy.deepcopy(k.body)), tab)
    live = {a.name for a in k.args if a.intent in ("out", "inout") and not a.dims}
    if k.kind == "function" and k.result is not None:
        live.add(k.result.name)
    return Planner(k, tab, TranslateOptions()).plan(body, live)


def _nodes(nodes, inside_version=False):
    """(node, inside a PVersion) for every plan node, nested ones included."""
    from port_fortran.translate.plan import PIf, PLoop, PVersion, PWhile

    for n in nodes:
        yield n, inside_version
        if isinstance(n, PVersion):
            yield from _nodes([n.parallel, n.serial], True)
        elif isinstance(n, PIf):
            for b in n.branches + [n.else_body]:
                yield from _nodes(b, inside_version)
        elif isinstance(n, (PLoop, PWhile)):
            yield from _nodes(n.body, inside_version)


def test_a_conditionally_independent_loop_gets_both_kernels_chosen_where_it_starts():
    from port_fortran.fortran.render import expr_str
    from port_fortran.translate.plan import PVersion

    k, sf = _kernel("versions.f", "vsym")
    versions = [n for n, _ in _nodes(_plan(k, sf)) if isinstance(n, PVersion)]
    assert [(n.do.line, expr_str(n.cond), n.parallel.kind, n.serial.kind) for n in versions] == [
        (34, "k /= 0", "range", "serial"), (37, "koff == 0 .or. abs(koff) >= n", "range", "serial"),
        (45, "abs(lda) >= m", "mdrange", "serial")]
    for n in versions:  # the same statements in both
        assert n.parallel.band[0] is n.do and n.serial.stmts == [n.do]
    port = translate_kernel(k, sf)
    assert port.patterns == ["parallel_for", "serial", "versioned", "mdrange"]
    assert port.versions == ["line 34: do i parallel if k /= 0", "line 37: do i parallel if koff == 0 .or. abs(koff) >= n",
                             "line 45: do j parallel if abs(lda) >= m"]
    cpp = _views_body(port, "vsym")
    assert "if (k != 0) {" in cpp
    assert "if (koff == 0 || pf::abs(koff) >= n) {" in cpp and "if (pf::abs(lda) >= m) {" in cpp
    assert all("run when" in x for x in port.notes if x.startswith(("line 34:", "line 37:", "line 45:")))


def test_zero_stride_loop_keeps_its_inductions_in_the_parallel_version_only():
    from port_fortran.translate.plan import PVersion

    k, sf = _kernel("versions.f", "vaxpy")
    (v,) = [n for n, _ in _nodes(_plan(k, sf)) if isinstance(n, PVersion)]
    assert [i.var for i in v.parallel.inductions] == ["ix", "iy"]
    assert v.serial.copy_in == ["ix", "iy"]  # the serial loop steps them itself, from their values
    assert "if (incy != 0) {" in _views_body(translate_kernel(k, sf), "vaxpy")


def test_no_loop_with_a_condition_is_planned_as_a_parallel_kernel_alone():
    files = [SAMPLES / f for f in ("blas1.f", "sblas1.f", "zblas1.f")] + [DATA / "versions.f", DATA / "basics.f90"]
    guarded = 0
    for f in files:
        sf = parse_file(str(f))
        for k in sf.kernels:
            for n, inside in _nodes(_plan(k, sf)):
                if getattr(n, "kind", "serial") != "serial" and any(d.info.condition is not None for d in n.band):
                    assert inside, (k.name, n.line)
                    guarded += 1
    assert guarded >= 7


def test_loc_reduction_with_its_value_computed_in_private_scalars():
    port = _port("basics.f90", "dtctl")
    body = _views_body(port, "dtctl")
    assert port.patterns == ["reduce"] and "minloc of w2 with idt" in body
    start = body.index("KOKKOS_LAMBDA")
    lam = body[start:body.index("}, locreducer_L", start)]
    assert "double w1 = 0.0;" in lam and "w1 = pf::abs(elen(i - 1))" in lam  # per iteration, private


# ------------------------------------------------------------------ section reductions


def test_sums_into_a_small_array_under_an_inner_loop_are_one_reduction_over_the_nest():
    """``rms(m) = rms(m) + add*add`` under ``do m = 1, 5`` inside a grid nest (the norm
    routines of CFD codes): a section reduction, each thread accumulating into a private
    copy of rms; the nest is one MDRange reduce, the result combined element by element
    with the values before the loop. A scratch array a called routine fills at every
    point is private to the iteration."""
    k, sf = _kernel("norms.f", "sqnorm")
    loops = {d.line: d.info for d in k.loops()}
    red = {r.var: r for r in loops[20].reductions}
    assert red["rms"].op == "sum" and red["rms"].section == ((1, 5),)
    assert red["big"].op == "max" and red["big"].section == ((1, 2),)  # its own inner loop only
    assert "dev" in loops[20].private  # pointval fills it before the loop reads it
    port = translate_kernel(k, sf)
    assert any("parallel_reduce over an MDRangePolicy of k, j, i" in n for n in port.notes), port.notes
    cpp = port.files["sqnorm.kokkos.cpp"]
    assert "pf::Private<double, 5> rms;" in cpp and "pf::Private<double, 2> big;" in cpp
    assert "pf::Private<double, 5>& rms = pf_acc.rms;" in cpp
    assert "for (long pf_q0 = 0; pf_q0 <= 1; ++pf_q0)" in cpp  # big's combine stays in its bounds


def test_a_section_past_the_declared_bounds_stays_serial(tmp_path):
    src = tmp_path / "past.f"
    src.write_text("""\
      subroutine past(n, a, s)
      integer n, i, m
      double precision a(n), s(3)
      do i = 1, n
         do m = 1, 4
            s(m) = s(m) + a(i)
         enddo
      enddo
      end
""")
    sf = parse_file(str(src), use_cache=False)
    port = translate_kernel(sf.kernels[0], sf)
    assert any("outside its declared bounds" in n for n in port.notes), port.notes


def test_a_line_buffer_filled_over_part_of_its_extent_is_private():
    """NPB MG's smoothers fill r1(i1) for i1 = 1, n1 (n1 below the declared m) and read
    r1(i1 - 1), r1(i1 + 1) for i1 = 2, n1 - 1: every read stays in the part filled, so the
    buffer is private to each (i2, i3) and the nest is one MDRange."""
    k, sf = _kernel("norms.f", "psmooth")
    loops = {d.line: d.info for d in k.loops()}
    assert loops[44].parallel and {"r1", "r2"} <= set(loops[44].private)
    port = translate_kernel(k, sf)
    assert any("MDRangePolicy over i3, i2" in n for n in port.notes), port.notes
    assert "pf::Private<double, 40> r1;" in port.files["psmooth.kokkos.cpp"]


def test_a_read_past_the_part_filled_keeps_the_loop_serial(tmp_path):
    src = tmp_path / "past2.f"
    src.write_text("""\
      subroutine past2(n, a, b)
      integer n, i, j
      double precision a(n, n), b(n, n), t(50)
      do j = 1, n
         do i = 1, n - 1
            t(i) = a(i, j)
         enddo
         do i = 1, n
            b(i, j) = t(i)
         enddo
      enddo
      end
""")
    sf = parse_file(str(src), use_cache=False)
    k = sf.kernels[0]
    outer = next(d for d in k.loops() if d.var == "j")
    assert not outer.info.parallel  # t(n) is read but was never filled in this iteration


def test_a_common_work_array_is_private_with_the_last_iteration_writing_through():
    """NPB's solvers fill COMMON work arrays at every grid line: they matter after the
    routine (the caller sees the block), so plain privatisation would lose the values the
    Fortran loop leaves. Every iteration writes the same elements, so the sequentially last
    one works on the array itself and the others on copies."""
    k, sf = _kernel("scratch.f", "lsweep")
    outer = next(d for d in k.loops() if d.var == "k")
    assert outer.info.parallel and outer.info.last_private == ["w"]
    port = translate_kernel(k, sf)
    assert any("w private to each iteration, the last one writing through" in n for n in port.notes), port.notes
    cpp = port.files["lsweep.kokkos.cpp"]
    assert "const bool pf_last = k == nz - 2 && j == ny - 2;" in cpp
    assert "pf::Scratch<double, 24, 5> w(pf_last ? pf_array_w : pf_own_w.data());" in cpp
    k2, _ = _kernel("scratch.f", "csweep")
    outer2 = next(d for d in k2.loops() if d.var == "j")
    assert not outer2.info.parallel  # a conditional write: the elements differ per iteration


def test_a_work_array_read_past_what_the_iteration_wrote_reads_the_array_there():
    """SP's line sweeps: cv is filled for i = 0, gp(1) - 1 and read at i + 1 for i up to
    nx2, a COMMON member nothing relates to gp(1). Every (j, k) writes the same elements
    before reading any, so an element it did not write still holds its value from before
    the loop: each iteration gets a copy for the box it writes and reads the block outside
    it, and the sweep is one MDRange. A fill that reads the array, or writes it under a
    condition, keeps the sweep serial."""
    k, sf = _kernel("linesolve.f", "xsweep")
    outer = next(d for d in k.loops() if d.var == "k")
    assert outer.info.parallel, outer.info.reasons
    assert set(outer.info.last_private) == {"cv", "rhon"}
    (box,) = outer.info.scratch_boxes["cv"]
    assert [(expr_str(lo), expr_str(hi)) for lo, hi in box] == [("0", "gp(1)-1")]
    cpp = translate_kernel(k, sf).files["xsweep.kokkos.cpp"]
    assert ("pf::BoxScratch<double, 1, 20> cv(pf_last ? pf_array_cv : pf_own_cv.data(), pf_array_cv, "
            "{{0 - cv_lb1}}, {{gp(0) - 1 - cv_lb1}});") in cpp, cpp
    for name in ("xrecur", "xcond"):
        k2, _ = _kernel("linesolve.f", name)
        outer2 = next(d for d in k2.loops() if d.var == "k")
        assert not outer2.info.parallel and "cv" not in outer2.info.last_private, name


def test_loop_bounds_that_read_arrays_are_computed_before_the_policy():
    """A kernel's policy is built on the host: NPB's ``do k = 1, grid_points(3) - 2`` read a
    device View there and the CUDA run failed. The bounds of xnorm's band (all read COMMON
    gp) are temporaries a single-iteration kernel computes first; no policy reads an array."""
    k, sf = _kernel("linesolve.f", "xnorm")
    cpp = translate_kernel(k, sf).files["xnorm.kokkos.cpp"]
    policies = re.findall(r"pf::parallel_(?:for|reduce)\((?:pf::Label\()?\"[^\"]+\"(?:, \d+\))?, (.*?), KOKKOS_LAMBDA", cpp)
    assert policies and all("gp(" not in p for p in policies), policies
    assert "pf::nest<4>({1, 1, 1, 1}, {3, pf_b3, pf_b2, pf_b1})" in cpp
    assert "pf_b1 = gp(2) - 2;" in cpp and "pf_dev_pf_b1.to_host();" in cpp  # k's end, gp(3) - 2
    # inside a time loop on the host (xsteps), before each kernel the loop launches
    k, sf = _kernel("linesolve.f", "xsteps")
    cpp = translate_kernel(k, sf).files["xsteps.kokkos.cpp"]
    policies = re.findall(r"pf::parallel_(?:for|reduce)\((?:pf::Label\()?\"[^\"]+\"(?:, \d+\))?, (.*?), KOKKOS_LAMBDA", cpp)
    # (the sum into rms(it) over k a reduction into a scalar, pf_r1, made first)
    assert policies == ["pf::nest<3>({1, 1, 1}, {pf_b4, pf_b3, pf_b2})", "pf::range(1, pf_b5)"], policies
    assert cpp.index("for (it = 1; it <= nit; ++it) {") < cpp.index("pf_dev_pf_b4.to_host();") < cpp.index(policies[0])


def test_a_jump_to_a_loop_whose_bounds_are_hoisted_runs_their_assignments_first():
    """The label of a DO whose bounds became temporaries moves to the first assignment of
    them: a GO TO that label would otherwise enter the loop with stale bounds."""
    import copy

    from port_fortran.translate.hoist import hoist_array_bounds
    from port_fortran.translate.symbols import build_symbols

    k, sf = _kernel("linesolve.f", "xnorm")
    body = copy.deepcopy(k.body)
    nest = next(st for st in body if isinstance(st, ir.Do) and st.var == "k")
    nest.label = 30
    out = hoist_array_bounds(body, build_symbols(k, sf))
    first = out.index(nest) - 3  # three bounds read gp: k's, j's and i's ends
    assert [type(st).__name__ for st in out[first:out.index(nest)]] == ["Assign"] * 3
    assert out[first].label == 30 and nest.label is None


# ------------------------------------------------------------------ parts set up by calls


def test_a_work_array_set_up_by_a_helper_and_a_loop_and_read_through_calls_is_private():
    """Block line solves (ADI-style CFD codes): each (j, k) sets up a work array of blocks,
    the two end rows by a helper (``bends``: it only writes its dummy), the inner rows by a
    nest, then helpers read and update single blocks passed by element. The parts written
    join into rows 0..isz; every block a call touches (its span through sequence
    association) lies in them, so the array is private and (j, k) is one MDRange whose
    iterations call device functions on pointers into their own copy."""
    k, sf = _kernel("blocks.f", "bsolve")
    outer = next(d for d in k.loops() if d.var == "k")
    assert outer.info.parallel and {"blk", "q"} <= set(outer.info.private), outer.info.reasons
    port = translate_kernel(k, sf)
    cpp = port.files["bsolve.kokkos.cpp"]
    assert "pf::nest<2>({1, 1}, {ny - 2, nz - 2})" in cpp
    assert "pf::Private<double, 3, 3, 3, 16> blk;" in cpp
    assert "bmm_fn(&blk(0, 0, 0, i), &blk(0, 0, 2, i - 1), &blk(0, 0, 1, i));" in cpp


def test_a_common_work_array_written_by_calls_writes_through_from_the_last_iteration():
    """The same solve with the work array in COMMON: its values matter after the routine.
    The helpers write the same blocks in every iteration (their writes unconditional, or
    under conditions on their own loop variables only; their arguments free of j and k),
    so the last iteration writes through and the others work on copies."""
    k, sf = _kernel("blocks.f", "csolve")
    outer = next(d for d in k.loops() if d.var == "k")
    assert outer.info.parallel and set(outer.info.last_private) == {"blk", "q"}, outer.info.reasons
    cpp = translate_kernel(k, sf).files["csolve.kokkos.cpp"]
    assert "pf::Scratch<double, 3, 3, 3, 16> blk(pf_last ? pf_array_blk : pf_own_blk.data());" in cpp


@pytest.mark.parametrize("change, why", [
    ("call binv(blk(1, 1, 2, 0), blk(1, 1, 3, 0), f(1, 0, j, k))",
     "call binv(blk(1,1,2,isz+1), blk(1, 1, 3, 0), f(1, 0, j, k))"),  # a block no one set up
    ("blk(m, n, l, 0) = 0.0d0", "blk(m, n, l, 0) = 0.5d0*blk(m, n, l, 0)"),  # the helper reads it: row 0 is old
    ("do i = 1, isz - 1\n               do n", "do i = 2, isz - 1\n               do n"),  # row 1 not set up
])
def test_a_read_of_a_block_the_iteration_did_not_set_up_keeps_the_loop_serial(tmp_path, change, why):
    text = (DATA / "blocks.f").read_text()
    first = text[:text.index("      subroutine csolve")] + text[text.index("      subroutine bends"):]
    assert change in first
    src = tmp_path / "b.f"
    src.write_text(first.replace(change, why, 1))
    sf = parse_file(str(src), use_cache=False)
    k = next(x for x in sf.kernels if x.name == "bsolve")
    outer = next(d for d in k.loops() if d.var == "k")
    assert not outer.info.parallel and "blk" not in outer.info.private


def test_a_helper_writing_blocks_on_a_data_condition_keeps_the_common_array_serial(tmp_path):
    """A callee whose writes depend on the data writes different blocks in different
    iterations: the last iteration would not write through what the others wrote."""
    text = (DATA / "blocks.f").read_text()
    old = "            if (m .ne. l) then\n"
    assert old in text
    src = tmp_path / "c.f"
    src.write_text(text.replace(old, "            if (a(m, l) .ne. 0.0d0) then\n"))
    sf = parse_file(str(src), use_cache=False)
    k = next(x for x in sf.kernels if x.name == "csolve")
    outer = next(d for d in k.loops() if d.var == "k")
    assert not outer.info.parallel
    k2 = next(x for x in sf.kernels if x.name == "bsolve")  # a local array stays private all the same
    assert next(d for d in k2.loops() if d.var == "k").info.parallel


# ------------------------------------------------------------------ interchange


def test_a_serial_loop_around_a_parallel_one_is_interchanged_when_the_turned_nest_is_parallel():
    """dgemv 'N' as written launches a kernel per column and copies temp to the host
    between them; interchanged, the rows are one kernel and each runs over the columns in
    the original order, temp recomputed per (i, j)."""
    k, sf = _kernel("turn.f", "colupd")
    top = k.loops()[0]
    assert (top.var, top.info.parallel, top.info.interchanged) == ("i", True, 12)
    port = translate_kernel(k, sf)
    assert "line 10: do i (interchanged: the loop of line 12 moved outside) -> parallel_for" in "\n".join(port.notes)
    body = _views_body(port, "colupd")
    assert body.count("pf::parallel_for(") == 1 and "single_for" not in body
    start = body.index("KOKKOS_LAMBDA(const int i)")
    assert "for (j = 1; j <= n; ++j)" in body[start:] and "temp = alpha * x(j - 1);" in body[start:]


def test_an_independent_recurrence_per_column_becomes_one_kernel_over_the_columns():
    k, _ = _kernel("turn.f", "colrec")
    top = k.loops()[0]
    assert (top.var, top.info.parallel) == ("j", True)
    assert not next(d for d in k.loops() if d.var == "i").info.parallel  # the recurrence itself


def test_a_nest_whose_turned_form_has_a_dependence_is_left_as_written():
    k, _ = _kernel("turn.f", "shear")
    top = k.loops()[0]
    assert (top.var, top.info.parallel, top.info.interchanged) == ("j", False, 0)
    assert next(d for d in k.loops() if d.var == "i").info.parallel


def test_scalars_set_from_what_the_inner_loop_writes_keep_the_nest_as_written(tmp_path):
    src = tmp_path / "upd.f"
    src.write_text("""\
      subroutine upd(m, n, a, y)
      integer m, n, i, j
      double precision a(m, n), y(m), s
      do j = 1, n
         s = y(1)
         do i = 2, m
            y(i) = y(i) + s*a(i, j)
         enddo
      enddo
      end
""")
    sf = parse_file(str(src), use_cache=False)
    top = sf.kernels[0].loops()[0]
    assert (top.var, top.info.interchanged) == ("j", 0)


def test_jumps_no_if_or_do_rewrite_covers_run_as_a_dispatch_loop():
    """FACTR's search loop is entered at three labels: the statements from the first jump
    to the last become a loop over numbered blocks (each GO TO sets the block and starts
    the loop again); the statements before and the scaling loop after stay as they were."""
    port = _port("dispatch.f", "factr")
    assert port.patterns and "parallel_for" in port.patterns
    body = _views_body(port, "factr")
    start = body.index('pf::single_for("factr:L16"')
    loop = body[start:body.index("// line 28: do i -> parallel_for")]
    assert "while (true) {" in loop and loop.count("} else if (pf_go1 == ") == 3
    assert "if (pf_go1 == 0) {\n          k = k + 1;" in loop  # block 0 starts at label 10
    assert "pf_go1 = 3;\n            continue;" in loop and "break;" in loop
    assert body.index("if (n <= 1) {") < start  # before the region: as written
    assert 'pf::parallel_for(pf::Label("factr:L28", 5), pf::range(1, m)' in body


def test_a_jump_out_of_a_loop_to_the_routine_level_is_still_refused(tmp_path):
    src = tmp_path / "out.f"
    src.write_text("""\
      SUBROUTINE FIND(N, X, K)
      INTEGER N, K, I
      DOUBLE PRECISION X(N)
      K = 0
   10 K = K + 1
      IF (K .GT. N) GO TO 30
      DO 20 I = 1, N
         IF (X(I) .GT. DBLE(K)) GO TO 10
   20 CONTINUE
   30 X(1) = DBLE(K)
      RETURN
      END
""")
    sf = parse_file(str(src))
    with pytest.raises(TranslationRefused) as e:
        translate_kernel(sf.kernels[0], sf)
    assert "[unstructured-goto]" in str(e.value) and "out.f:8:" in str(e.value)


def test_line_solve_with_common_temporaries_runs_as_one_parallel_nest():
    # lastval.f's dsolve: COMMON temporaries assigned at every point, a work array set up
    # by helpers (one addressing its last row through a local set once, one eliminating
    # right of the pivot): the (j, k) nest is one MDRange, the array written through and
    # the temporaries handed on by the last iteration
    port = _port("lastval.f", "dsolve")
    cpp = port.files["dsolve.kokkos.cpp"]
    assert "mdrange" in port.patterns
    assert "if (pf_last) pf_last_t1() = t1;" in cpp and "Kokkos::deep_copy(t1, pf_last_t1);" in cpp
    assert "pf::Scratch<double, 3, 3, 3, 16> blk(pf_last ? pf_array_blk : pf_own_blk.data());" in cpp
    # assigned only where a condition holds: the last iteration may leave t1 alone
    assert _port("lastval.f", "xcondt").patterns == ["serial"]


def test_a_sum_into_one_element_is_reduced_in_a_scalar_when_no_loop_around_is_parallel(tmp_path):
    # a triangular solve: x(i) summed over j < i while x(j) is read; the loop over i is
    # serial, so the loop over j is a parallel_reduce into a scalar set from x(i) first
    src = tmp_path / "tri.f90"
    src.write_text("subroutine tri(n, a, x)\n  integer :: n, i, j\n  double precision :: a(n, n), x(n)\n"
                   "  do i = 2, n\n    do j = 1, i - 1\n      x(i) = x(i) - a(j, i) * x(j)\n    end do\n"
                   "  end do\nend subroutine tri\n")
    sf = parse_file(str(src))
    cpp = translate_kernel(sf.kernels[0], sf).files["tri.kokkos.cpp"]
    assert "pf_r1 = x(i - 1);" in cpp and "x(i - 1) = pf_r1;" in cpp
    assert re.search(r"parallel_reduce\(pf::Label\(\"tri:L5\", 2\), pf::range\(1, i - 1\), KOKKOS_LAMBDA\(const int j, double& pf_r1\)",
                     cpp)
    assert "pf_r1 = pf_r1 - a(j - 1, i - 1) * x(j - 1);" in cpp
    # x(j + 1) may be x(i): no reduction, the loop stays serial
    src.write_text(src.read_text().replace("* x(j)", "* x(j + 1)"))
    sf = parse_file(str(src), use_cache=False)
    assert translate_kernel(sf.kernels[0], sf).patterns == ["serial"]
