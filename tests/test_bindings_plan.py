"""What the Python function of a port takes and returns, decided from the IR (no builds):
dtypes and ranks from the Fortran declarations, extents from what the entry wraps,
intent(out) scalars returned instead of passed, refusals that name file and line."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from port_fortran.bindings import codegen
from port_fortran.bindings.plan import check_module_name, merge_commons, plan_function
from port_fortran.errors import UserError
from port_fortran.fortran import parse_file

DATA = Path(__file__).parent / "data" / "bindings"
SAMPLES = Path(__file__).parent.parent / "fortran_kernels"


def _kernel(path, name):
    sf = parse_file(str(path))
    return next(k for k in sf.kernels if k.name == name), sf


def _plan(path, name):
    k, sf = _kernel(path, name)
    return plan_function(k, sf)


def test_every_kind_of_argument():
    f = _plan(DATA / "bindk.f90", "blend")
    by = {a.name: a for a in f.args}
    assert [a.name for a in f.args] == ["mode", "n", "m", "a", "lda", "b", "z", "mask", "total", "count", "found"]
    assert [a.position for a in f.args] == list(range(1, 12))
    # dtypes from the Fortran types; LOGICAL arrays are gfortran's 4-byte integers
    assert (by["a"].dtype, by["a"].rank) == ("<f8", 2)
    assert (by["z"].dtype, by["z"].dtype_name) == ("<c16", "complex128")
    assert (by["mask"].dtype, by["mask"].dtype_name) == ("<i4", "int32")
    assert by["mode"].ctype == "char" and by["n"].ctype == "int32_t"
    # the extents are the entry's: a(lda, m), b(0:n+1)
    assert by["a"].extents == (("1", "lda"), ("1", "m"))
    assert by["b"].extents == (("0", "n + 1"),) and by["b"].bounds_text == ("0:n+1",)
    assert by["a"].declared == "a(lda, m)" and by["b"].declared == "b(0:n+1)"
    # intent(out) scalars are returned, not passed; intent(inout) scalars are passed and returned
    assert [a.name for a in f.python_args] == ["mode", "n", "m", "a", "lda", "b", "z", "mask", "count"]
    assert f.returns == ["total", "count", "found"]
    assert by["b"].writable and not by["a"].writable
    # the extent helper takes exactly the scalars the extents name
    assert [s[0] for s in f.extent_scalars] == ["n", "m", "lda"]
    # the COMMON block is defined in the module and exposed
    assert [c.symbol for c in f.commons] == ["bcfg_"]
    assert [m.name for m in f.commons[0].members] == ["scale", "nsh"]
    assert [m.dtype for m in f.commons[0].members] == ["<f8", "<i4"]


def test_function_result_comes_first():
    f = _plan(DATA / "bindk.f90", "wsum")
    assert f.kind == "function" and f.result_base == "real" and f.result_ctype == "double"
    assert f.returns == ["result"]
    assert [a.name for a in f.python_args] == ["n", "w", "x"]


def test_assumed_size_extents_come_from_the_subscripts_touched():
    f = _plan(SAMPLES / "blas2.f", "dgemv")
    by = {a.name: a for a in f.args}
    assert by["a"].extents == (("1", "lda"), ("1", "n"))
    assert by["a"].declared == "a(lda, *)"
    # x(*) is read up to max(n, m) (either case of the TRANS flag)
    assert by["x"].bounds_text[0].startswith("1:max(")
    assert f.returns == []


def test_docstring_states_the_signature_and_what_is_returned():
    f = _plan(DATA / "bindk.f90", "blend")
    doc = codegen.docstring(f, "openmp")
    first = doc.splitlines()[0]
    assert first.startswith("blend(mode, n, m, a, lda, b, z, mask, count, *, copy=False) -> (")
    assert "total: float" in first and "found: bool" in first
    assert "bindk.f90:6-" in doc and "openmp backend" in doc
    assert "numpy int32 array" in doc  # the LOGICAL mask


def test_copy_keyword_avoids_an_argument_named_copy(tmp_path):
    src = tmp_path / "c.f90"
    src.write_text(textwrap.dedent("""\
        subroutine dup(n, copy, x)
          integer, intent(in) :: n, copy
          real(8), intent(inout) :: x(n)
          integer :: i
          do i = 1, n
            x(i) = x(i) * copy
          end do
        end subroutine dup
        """))
    f = _plan(src, "dup")
    assert f.copy_keyword == "copy_"
    assert "copy_=False" in codegen.docstring(f, "serial").splitlines()[0]


def test_refusals_name_file_and_line(tmp_path):
    src = tmp_path / "bad.f90"
    src.write_text(textwrap.dedent("""\
        subroutine opt(n, x, w)
          integer, intent(in) :: n
          real(8), intent(inout) :: x(n)
          real(8), intent(in), optional :: w
          x(1) = 0
        end subroutine opt
        """))
    with pytest.raises(UserError) as exc:
        _plan(src, "opt")
    msg = str(exc.value)
    assert f"{src}:1: opt: no Python binding" in msg and "OPTIONAL" in msg


def test_module_names_and_common_clashes():
    assert check_module_name("kokkos_ports") == "kokkos_ports"
    for bad in ("1abc", "a-b", "class", ""):
        with pytest.raises(UserError, match="not a valid Python module name"):
            check_module_name(bad)
    f = _plan(DATA / "bindk.f90", "blend")
    assert len(merge_commons([f, f])) == 1  # one block, defined once
    from dataclasses import replace

    other = replace(f, name="other", commons=(replace(f.commons[0], definition=("different",)),))
    with pytest.raises(UserError, match=r"declares COMMON /bcfg/ differently"):
        merge_commons([f, other])


def test_module_source_holds_each_function_once():
    fs = [_plan(DATA / "bindk.f90", "blend"), _plan(DATA / "bindk.f90", "wsum")]
    text = codegen.module_source("m", fs, merge_commons(fs), "serial", {"blend": "/p/blend", "wsum": "/p/wsum"})
    assert text.count('m.def("blend"') == 1 and text.count('m.def("wsum"') == 1
    assert text.count("pf_common_bcfg bcfg_;") == 1
    cm = codegen.module_cmake("m", {"blend": "/p/blend", "wsum": "/p/wsum"}, "/s")
    assert "blend_kokkos wsum_kokkos Kokkos::kokkos" in cm and "OUTPUT_NAME m" in cm


def test_command_line_errors_are_one_line(tmp_path, capsys):
    from port_fortran.cli import main

    assert main(["bindings", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{tmp_path / 'port.json'}: not found" in err and "\n" not in err
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "port.json").write_text(
            '{"kernel": "blend", "source": "%s", "include_dirs": [], "defines": {}}' % (DATA / "bindk.f90"))
    assert main(["bindings", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "py")]) == 2
    assert "needs --module NAME" in capsys.readouterr().err
    assert main(["bindings", str(tmp_path / "a"), "--module", "not-a-name"]) == 2
    assert "not a valid Python module name" in capsys.readouterr().err
    assert main(["bindings", str(tmp_path / "a"), "--backend", "fpga"]) == 2
    assert "--backend 'fpga'" in capsys.readouterr().err
    # two ports of one routine cannot share a module
    assert main(["bindings", str(tmp_path / "a"), str(tmp_path / "b"), "--module", "m", "--backend", "serial",
                 "-o", str(tmp_path / "py")]) == 2
    assert "routine blend is also ported in" in capsys.readouterr().err
    # no verdict.json and no --backend: say how to choose
    assert main(["bindings", str(tmp_path / "a")]) == 2
    assert "pass --backend" in capsys.readouterr().err
