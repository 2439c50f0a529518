"""Device functions for callees in loops (issue 13): the interprocedural effects of a
callee (``fortran/effects.py``), the dependence verdicts of loops that call it, the
translation of callees as KOKKOS_INLINE_FUNCTIONs, and the proof: ports of routines that
call helpers per grid point (array-element actuals), in a reduction, and in another file
of the tree reproduce gfortran's build of the originals on Serial and OpenMP.

Test Fortran (``tests/data/devfunc``, written for these tests):

  grid.f          EXACT fills DTEMP(5) (a local array inside); SETBV calls it with
                  U(1,I,J,K) at every point of a K/J/I nest (one MDRange kernel)
  fields.f        FIELDS calls ADD2S(A(1,E), B(1,E), ...) per element, PRESS(U(1,E), .., P)
                  (a scalar out) and WEIGHT(P, W) in a sum and a max reduction
  lib/physics.f   ADD2S, PRESS, WEIGHT -> HORNER (another file); SHOUT (I/O), SCALED (COMMON)
  impure.f        loops calling SHOUT and SCALED: serial, the reason naming callee and line
  errexit.f       helpers ending the program on bad arguments (test_error_exits.py)
  blocks.f90      BFACT (blocks of rows, a recurrence down each column of a block, parallel
                  over the columns): PINIT calls it outside any loop (inlined, its loop a
                  kernel of PINIT), PSWEEP in a loop (a device function, in the source's
                  order), PFLAT with arrays declared otherwise (a device function); PNORM
                  calls BSUM (a sum into its scalar dummy) with N - 1 for its M: inlined
  deps.f          verdicts: disjoint and overlapping windows, columns, spills, slabs, a
                  whole array, a callee passing its dummy on (MID3 -> FILLM), legacy Y(1)
"""
from __future__ import annotations

from pathlib import Path

import pytest

from port_fortran.fortran import affine, ir, parse_file
from port_fortran.fortran.effects import Calls, load_for_port
from port_fortran.fortran.program_build import build_program
from port_fortran.fortran.render import expr_str
from port_fortran.records import TranslationRefused
from port_fortran.translate import translate_kernel, write_port

DATA = Path(__file__).parent / "data" / "devfunc"
LIB = DATA / "lib" / "physics.f"


def loops(k: ir.Kernel) -> dict[int, ir.Do]:
    return {d.line: d for d in k.loops()}


def codes(d: ir.Do) -> list[str]:
    return [r.code for r in d.info.reasons]


def poly(e):
    return affine.poly_of(e)


@pytest.fixture(scope="module")
def deps():
    sf = parse_file(DATA / "deps.f", use_cache=False)
    assert not sf.errors, sf.errors
    return {k.name: k for k in sf.kernels}, sf


# ------------------------------------------------------------------ effects


def test_effects_of_a_grid_point_helper():
    sf = parse_file(DATA / "grid.f", use_cache=False)
    setbv = next(k for k in sf.kernels if k.name == "setbv")
    eff = Calls.of_file(sf).effects(setbv, "exact")
    assert eff.translatable and eff.callee.name == "exact"
    xi, eta, zeta, dtemp = eff.dummies
    assert (xi.read, xi.write, xi.rank) == (True, False, 0)
    assert (dtemp.read, dtemp.write, dtemp.rank) == (False, True, 1)
    assert [poly(x) for x in dtemp.span] == [affine.const(0), affine.const(4)]  # DTEMP(1:5)


def test_effects_symbolic_and_transitive(deps):
    ks, sf = deps
    calls = Calls.of_file(sf)
    fillm = calls.effects(ks["cols"], "fillm")
    v, m, t = fillm.dummies
    assert poly(v.span[0]) == affine.const(0) and poly(v.span[1]) == affine.add(affine.var("m"), affine.const(-1))
    assert (v.write, m.write, t.read) == (True, False, True)
    # MID3 passes X(3) on to FILLM(.., 3, ..): it touches X(3:5), offsets 2..4
    x = calls.effects(ks["trans"], "mid3").dummies[0]
    assert [poly(e) for e in x.span] == [affine.const(2), affine.const(4)] and x.write and not x.read


def test_actual_arguments_as_ranges(deps):
    ks, sf = deps
    calls = Calls.of_file(sf)
    cols = ks["cols"]
    a_col = ir.ArrayRef("a", [ir.Literal(1, "1", ftype=ir.INTEGER), ir.Name("j", ftype=ir.INTEGER)])
    n, k = ir.Name("n", ftype=ir.INTEGER), ir.Name("k", ftype=ir.INTEGER)
    one = ir.Literal(1.0, "1.0d0", ftype=ir.REAL8)
    assert expr_str(calls.actual_ref(cols, "fillm", [a_col, n, one], 0)) == "a(1:n, j)"  # fits the column
    assert expr_str(calls.actual_ref(cols, "fillm", [a_col, k, one], 0)) == "a(1:n, j:m)"  # may spill: to the end
    g = ir.ArrayRef("g", [ir.Literal(1, "1", ftype=ir.INTEGER)] * 2 + [k])
    nxny = ir.BinOp("*", ir.Name("nx", ftype=ir.INTEGER), ir.Name("ny", ftype=ir.INTEGER), ftype=ir.INTEGER)
    assert expr_str(calls.actual_ref(cols, "fillm", [g, nxny, one], 0)) == "g(1:nx, 1:ny, k:k)"  # one slab
    # an unknown callee may touch anything from the element on
    assert expr_str(calls.actual_ref(cols, "nowhere", [a_col], 0)) == "a(1:n, j:m)"


# ------------------------------------------------------------------ dependence verdicts


def test_dependence_verdicts_with_calls(deps):
    ks, _ = deps
    b = loops(ks["blocks"])
    assert b[37].info.parallel  # FILL5(U(5*I-4)): disjoint blocks of five
    assert codes(b[41]) == ["loop-carried-dependence"] and "v(i:i+4)" in b[41].info.reasons[0].message
    c = loops(ks["cols"])
    assert c[51].info.parallel  # FILLM(A(1,J), N): a column
    assert codes(c[55]) == ["possible-dependence"]  # K entries may spill into the next columns
    assert c[59].info.parallel  # FILLM(G(1,1,K), NX*NY): a slab
    assert c[63].info.parallel  # R(J) = TOTAL(N, A(1,J)): a function reading a column
    assert not c[67].info.parallel  # FILLM(A, N*M): every iteration writes the whole array
    assert loops(ks["trans"])[76].info.parallel  # MID3(X(5*I-4)) touches X(5*I-2:5*I)
    for d in list(b.values()) + list(c.values()):
        assert "call-in-loop" not in codes(d)


def test_access_bounds_through_calls(deps):
    ks, _ = deps
    x = ks["trans"].arg("x")  # assumed size, bounded by what MID3 touches
    assert [poly(e) for e in x.access_bounds[0]] == [affine.const(3), affine.mul(affine.const(5), affine.var("n"))]
    y = ks["leg"].arg("y")  # legacy Y(1) passed on to FILL5: assumed size, five elements
    assert y.dims[0].upper is None
    assert [poly(e) for e in y.access_bounds[0]] == [affine.const(1), affine.const(5)]


def test_callees_in_another_file():
    alone = parse_file(DATA / "fields.f", use_cache=False).kernels[0]
    first = loops(alone)[11]
    assert codes(first)[0] == "call-in-loop" and "add2s" in first.info.reasons[0].message \
        and "external" in first.info.reasons[0].message
    prog = build_program([DATA / "fields.f", LIB])
    k = prog.kernel(DATA / "fields.f", "fields")
    ls = loops(k)
    assert ls[11].info.parallel  # ADD2S(A(1,E), B(1,E), GAMMA, NQ): A(1:NQ, E)
    assert ls[14].info.parallel and ls[14].info.private == ["p"]  # PRESS assigns P before reading it
    assert sorted((r.var, r.op) for r in ls[14].info.reductions) == [("pmax", "max"), ("s", "sum")]
    assert [a.intent for a in k.args] == ["in", "in", "inout", "in", "in", "in", "in", "out", "inout", "inout"]


def test_untranslatable_callees_keep_the_loop_serial():
    prog = build_program([DATA / "impure.f", LIB])
    write_line = next(i for i, t in enumerate(LIB.read_text().splitlines(), 1) if "WRITE" in t)
    logit = prog.kernel(DATA / "impure.f", "logit")
    (d,) = logit.loops()
    r = d.info.reasons[0]
    assert r.code == "call-in-loop" and not d.info.parallel
    assert "shout" in r.message and f"physics.f:{write_line}" in r.message and r.line == 10
    usefac = prog.kernel(DATA / "impure.f", "usefac")
    (d,) = usefac.loops()
    r = d.info.reasons[0]
    assert r.code == "call-in-loop" and "scaled" in r.message and "COMMON /cfac/" in r.message
    # the full port needs the callee on the device: refused, naming it and its line
    k, sf = prog.load(DATA / "impure.f", "logit")
    with pytest.raises(TranslationRefused) as exc:
        translate_kernel(k, sf, program=prog)
    diag = exc.value.diagnostics[0]
    assert diag.code == "impure-call" and "shout" in diag.message and "called by logit at line 10" in diag.message
    assert diag.file.endswith("physics.f") and diag.line == write_line


# ------------------------------------------------------------------ translation


def test_setbv_is_one_mdrange_kernel_calling_a_device_function():
    prog = build_program([DATA / "grid.f"])
    k, sf = prog.load(DATA / "grid.f", "setbv")
    port = translate_kernel(k, sf, program=prog)
    assert port.patterns == ["mdrange"]
    assert any("exact" in n and "KOKKOS_INLINE_FUNCTION" in n for n in port.notes)
    code = port.files["setbv.kokkos.cpp"]
    assert "exact_fn(xi, eta, zeta, &u(0, i - 1, j - 1, k - 1))" in code  # the element's address
    assert "pf::FArray<double, 1> dtemp(pf_ptr_dtemp)" in code
    assert "double pf_store_ce[3]" in code  # EXACT's local array on the thread's stack
    assert "struct FArray" in port.files["pf_kokkos_compat.hpp"]
    assert "u.span_is_contiguous()" in code and "v.span_is_contiguous()" in code  # checked before addressing


def test_a_device_function_runs_its_loops_in_the_source_order():
    """BFACT's own port turns its nest (columns outside, one launch); as PSWEEP's device
    function the loops run in one thread, where the turn only loses the cache order (TeaLeaf's
    tea_block_init: 2.3x gfortran's time on one core)."""
    f = DATA / "blocks.f90"
    prog = build_program([f])
    own = translate_kernel(*load_for_port(prog, f, "bfact"), program=prog)
    assert any("interchanged" in n for n in own.notes)  # the premise: the analysis turns it
    assert 'pf::parallel_for("bfact:L16", pf::range(1, nx)' in own.files["bfact.kokkos.cpp"]  # over the columns
    port = translate_kernel(*load_for_port(prog, f, "psweep"), program=prog)
    fn = port.files["psweep.kokkos.cpp"]
    fn = fn[fn.index("KOKKOS_INLINE_FUNCTION void bfact_fn"):]
    assert fn.index("for (kb = 1; kb <= ny; kb += 4)") < fn.index("for (i = 1; i <= nx; ++i)")


def test_a_call_outside_the_loops_to_a_parallel_routine_is_inlined():
    """PINIT calls BFACT in an IF outside its loops: inlined, BFACT's column loop is a
    kernel of PINIT (as a device function the whole factorisation ran in one single-iteration
    kernel: one thread; TeaLeaf's solvers calling tea_block_solve, 1.6x the original on 2
    OpenMP threads). BFACT's locals take new names, its module constant NB comes along."""
    f = DATA / "blocks.f90"
    prog = build_program([f])
    port = translate_kernel(*load_for_port(prog, f, "pinit"), program=prog)
    code = port.files["pinit.kokkos.cpp"]
    assert "bfact_fn" not in code and "single_for" not in code
    assert 'pf::parallel_for("pinit:L40", pf::range(1, nx), KOKKOS_LAMBDA(const int bfact_i)' in code
    assert "bfact_kb += 4" in code  # NB = 4, BFACT's constant
    assert any(n.startswith("line 40: call bfact -> inlined") for n in port.notes)
    # a sum into a written scalar dummy (PNORM's local S), N - 1 for BSUM's M: X(M + 1) is X(N)
    norm = translate_kernel(*load_for_port(prog, f, "pnorm"), program=prog)
    assert norm.patterns == ["reduce"]
    assert 'pf::parallel_reduce(pf::Label("pnorm:L80", 2), pf::range(1, n - 1)' in norm.files["pnorm.kokkos.cpp"]
    # arrays declared with other bounds than the dummies (sequence association): not inlined
    flat = translate_kernel(*load_for_port(prog, f, "pflat"), program=prog)
    assert "bfact_fn(4, n / 4, d.data()" in flat.files["pflat.kokkos.cpp"]
    assert not any("inlined" in n for n in flat.notes)


# ------------------------------------------------------------------ proof

PORTS = [("grid.f", "setbv", []), ("fields.f", "fields", [LIB]), ("cread.f", "init", []),
         # callees with error exits, a COMMON table passed on to a reader (test_error_exits.py)
         ("errexit.f", "apply", []), ("errexit.f", "smooth", []), ("errloop.f", "clampall", []),
         ("blocks.f90", "pinit", []), ("blocks.f90", "psweep", []), ("blocks.f90", "pnorm", [])]


def harness(tmp_path, file, name, others):
    """(port, Harness) of one kernel ported with the program of its file and ``others``
    (also used by test_gpu_cuda)."""
    from port_fortran.harness import Harness

    prog = build_program([DATA / file] + others)
    k, sf = load_for_port(prog, DATA / file, name)
    port = translate_kernel(k, sf, program=prog)
    write_port(port, tmp_path / name)
    return port, Harness(k, sf, tmp_path / name, program=prog)


@pytest.mark.integration
@pytest.mark.parametrize("file,name,others", PORTS, ids=[p[1] for p in PORTS])
def test_port_with_device_functions_matches_original(tmp_path, file, name, others):
    port, h = harness(tmp_path, file, name, others)
    for backend in ("serial", "openmp"):
        b = h.build(backend)
        assert b.ok, f"{name} [{backend}] build failed:\n{b.condensed}"
        v = h.verify(backend)
        assert v.passed, f"{name} [{backend}] ({', '.join(port.patterns)}): {v.reason}"
        assert v.cases and all(c.outputs for c in v.cases)


def test_recursion_and_sections_are_not_guessed(tmp_path):
    src = tmp_path / "rec.f90"
    src.write_text("""\
recursive function fact(n) result(r)
  integer, intent(in) :: n
  integer :: r
  if (n <= 1) then
    r = 1
  else
    r = n*fact(n - 1)
  end if
end function fact

subroutine colsum(n, m, a, s)
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: s(m)
  integer :: j
  double precision :: total
  do j = 1, m
    s(j) = total(n, a(1:n, j))
  end do
end subroutine colsum

subroutine rowsum(n, m, a, s)
  integer, intent(in) :: n, m
  double precision, intent(in) :: a(n, m)
  double precision, intent(out) :: s(n)
  integer :: i
  double precision :: total
  do i = 1, n
    s(i) = total(m, a(i, 1:m))
  end do
end subroutine rowsum

double precision function total(n, x)
  integer, intent(in) :: n
  double precision, intent(in) :: x(n)
  total = sum(x)
end function total

subroutine usef(n, x)
  integer, intent(in) :: n
  integer, intent(out) :: x(n)
  integer :: i, fact
  do i = 1, n
    x(i) = fact(i)
  end do
end subroutine usef
""")
    sf = parse_file(src, use_cache=False)
    assert not sf.errors, sf.errors
    ks = {k.name: k for k in sf.kernels}
    (d,) = ks["usef"].loops()
    assert codes(d) == ["call-in-loop"] and "recursion" in d.info.reasons[0].message
    with pytest.raises(TranslationRefused):
        translate_kernel(ks["usef"], sf)
    # a contiguous section (a column) is passed in place, as gfortran does: its first element
    (d,) = ks["colsum"].loops()
    assert d.info.parallel
    port = translate_kernel(ks["colsum"], sf)
    assert "total_fn(n, &a(0, j - 1))" in port.files["colsum.kokkos.cpp"]
    # a row is not contiguous: Fortran passes a copy, the rules do not make one and say so
    (d,) = ks["rowsum"].loops()
    assert d.info.parallel
    with pytest.raises(TranslationRefused) as exc:
        translate_kernel(ks["rowsum"], sf)
    assert exc.value.diagnostics[0].code == "array-section" and "not contiguous" in exc.value.diagnostics[0].message


def test_a_callee_only_declaring_a_common_block_is_a_device_function():
    prog = build_program([DATA / "declared.f"])
    k = prog.kernel(DATA / "declared.f", "usedbl")
    (d,) = k.loops()
    assert d.info.parallel, d.info.reasons
    assert not prog.impurities(prog.kernel(DATA / "declared.f", "dblit"))
    k, sf = prog.load(DATA / "declared.f", "usedbl")
    port = translate_kernel(k, sf, program=prog)
    assert port.patterns == ["parallel_for"]
    assert "dblit_fn(" in port.files["usedbl.kokkos.cpp"]


def test_a_callee_reading_common_takes_the_members_from_its_caller():
    prog = build_program([DATA / "cread.f"])
    k = prog.kernel(DATA / "cread.f", "init")
    outer = loops(k)[24]
    assert outer.info.parallel, outer.info.reasons
    bad = loops(prog.kernel(DATA / "cread.f", "badini"))[39]
    assert codes(bad)[0] == "call-in-loop" and "declares COMMON /consts/ differently" in bad.info.reasons[0].message
    setce = loops(prog.kernel(DATA / "cread.f", "setce"))[50]
    assert not setce.info.parallel and "reads COMMON member ce, which the loop writes" in " ".join(
        r.message for r in setce.info.reasons)
    k, sf = load_for_port(prog, DATA / "cread.f", "init")
    call = next(s for s in ir.walk(k.body) if isinstance(s, ir.CallStmt))
    assert [getattr(a, "name", None) for a in call.args[3:]] == ["ce"]  # the member EXACTC reads
    port = translate_kernel(k, sf, program=prog)
    assert port.patterns == ["mdrange"]
    assert "exactc_fn(" in port.files["init.kokkos.cpp"]

def test_list_and_translate_answer_what_run_does_for_a_common_reader(tmp_path, capsys):
    """``list`` and ``translate`` load the kernel as ``run``'s stages do (the COMMON members
    EXACTC reads passed by INIT): a full port in all three, not a refusal of EXACTC as a
    COMMON user in two of them."""
    from port_fortran.cli import main

    assert main(["list", str(DATA / "cread.f")]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "subroutine init(" in x)
    assert "mode: full" in line, line
    assert main(["translate", str(DATA / "cread.f"), "--kernel", "init", "-o", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert "init: ported (mdrange)" in said, said
    assert "exactc_fn(" in (tmp_path / "init" / "init.kokkos.cpp").read_text()



@pytest.mark.integration
def test_a_hybrid_nest_calling_a_common_reader_is_proven(tmp_path):
    """INITIO writes a line (a hybrid port): its outlined nest takes CE as an argument and
    passes it to EXACTC's device function; the element U(1, I, J) it hands EXACTC makes U
    an output of the outlined kernel."""
    import json

    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.cli import main

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend")
    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    main([str(DATA / "cread.f"), "--kernel", "initio", "--backends", "serial,openmp", "--out", str(out),
          "--config", str(cfg), "--quiet"])
    k = {x["name"]: x for x in json.loads((out / "report.json").read_text())["kernels"]}["initio"]
    assert k["status"] == "verified", k["reason"]
    assert k["mode"] == "hybrid" and "mdrange" in k["patterns"]


def test_access_bounds_over_a_loop_run_either_way_with_common_counts(tmp_path):
    # Nekbone's h1mg_tnsr1_3d: elements walked forwards or backwards (the step is set on
    # two paths), an element's block found as 1 + (e-1)*nu**3, the count of elements in
    # COMMON, and the block passed to a helper that declares it as a matrix
    src = tmp_path / "tnsr.f"
    src.write_text("""\
      subroutine tnsr(v, nv, nu, a)
      integer nv, nu
      real v(1), a(1)
      common /dimn/ nelt
      integer e, e0, ee, es
      e0 = 1
      es = 1
      ee = nelt
      if (nv .gt. nu) then
         e0 = nelt
         es = -1
         ee = 1
      endif
      nu3 = nu**3
      do e = e0, ee, es
         iu = 1 + (e-1)*nu3
         call mxm(a, nv, v(iu), nu, nu*nu)
      enddo
      return
      end
      subroutine mxm(a, n1, b, n2, n3)
      real a(n1, n2), b(n2, n3)
      do j = 1, n3
         do i = 1, n2
            b(i, j) = 2.0*b(i, j) + a(1, i)
         enddo
      enddo
      return
      end
""")
    prog = build_program([src])
    k = next(prog.kernel_of(r) for r in prog.all_routines() if r.name == "tnsr")
    lo, hi = k.arg("v").access_bounds[0]
    env = {"nelt": 7, "nu": 3, "nv": 2}
    assert ir.evaluate(lo, env) == 1 and ir.evaluate(hi, env) == 7 * 27  # the last element's block ends there
    # a count the routine changes is no bound: the same routine assigning nelt has none
    src.write_text(src.read_text().replace("      nu3 = nu**3\n", "      nu3 = nu**3\n      nelt = nelt + 1\n"))
    prog = build_program([src])
    k = next(prog.kernel_of(r) for r in prog.all_routines() if r.name == "tnsr")
    assert k.arg("v").access_bounds[0] is None
    # nor one an EQUIVALENCE gives another name the routine may assign
    src.write_text(src.read_text().replace("      nelt = nelt + 1\n", "")
                   .replace("      integer e, e0, ee, es\n", "      integer e, e0, ee, es, mm\n      equivalence (nelt, mm)\n"))
    prog = build_program([src])
    k = next(prog.kernel_of(r) for r in prog.all_routines() if r.name == "tnsr")
    assert k.arg("v").access_bounds[0] is None
