"""Generated Fortran within free form's 132 columns (issue 12, class 3).

* ``fortran_lines`` breaks long statements after commas / at blanks, never inside a
  literal except with the standard's ``&`` ... ``&`` character continuation, moves
  trailing comments, splits comment lines; gfortran (-std=f2008, line truncation an error)
  compiles what it writes;
* the reference driver of a routine with a very long argument list and a COMMON block with
  many members is built by the harness (gfortran) and run: it reads every record and the
  routine's result comes back;
* the port's bind(C) interface module of the same routine compiles.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from port_fortran.fortran import parse_file
from port_fortran.fortran_lines import FREE_LIMIT, wrap_free_line, wrap_free_source

GFORTRAN = shutil.which("gfortran")
needs_gfortran = pytest.mark.skipif(GFORTRAN is None, reason="gfortran not installed")

NARGS = 70  # 70 arguments named like real codes: the call line alone is ~1200 columns
NCOMMON = 90


def _compile(tmp_path: Path, name: str, text: str) -> subprocess.CompletedProcess:
    f = tmp_path / name
    f.write_text(text)
    return subprocess.run([GFORTRAN, "-std=f2008", "-Werror=line-truncation", "-c", f.name], cwd=tmp_path,
                          capture_output=True, text=True)


def test_short_lines_unchanged():
    assert wrap_free_line("  call f(a, b)") == ["  call f(a, b)"]
    assert wrap_free_source("a\n  b\n") == "a\n  b\n"


def test_breaks_after_commas_within_limit():
    line = "  call k(" + ", ".join(f"a_argument_number_{i}" for i in range(40)) + ")"
    out = wrap_free_line(line)
    assert len(out) > 1 and all(len(x) <= FREE_LIMIT for x in out)
    assert all(x.endswith(" &") for x in out[:-1])
    # joined back (continuation marks and the indentation dropped) it is the same statement
    joined = "".join(x[:-2] if x.endswith(" &") else x for x in
                     [out[0]] + [y.lstrip() for y in out[1:]])
    assert joined.replace(" ", "") == line.replace(" ", "")


def test_literal_kept_whole_or_continued_with_ampersands():
    lit = "'" + "x, " * 60 + "'"  # commas inside the literal are no place to break
    out = wrap_free_line(f"  print *, {lit}")
    assert all(len(x) <= FREE_LIMIT for x in out)
    inner = [x for x in out if x.rstrip().endswith("&") and not x.endswith(" &")]
    assert inner, out  # the literal itself was broken: '&' at the end, '&' first on the next line
    nxt = out[out.index(inner[0]) + 1]
    assert nxt.lstrip().startswith("&")


def test_comments_split_and_trailing_comment_moved():
    out = wrap_free_line("  ! " + "word " * 60)
    assert len(out) > 1 and all(x.lstrip().startswith("!") and len(x) <= FREE_LIMIT for x in out)
    out = wrap_free_line("  x = 1 ! " + "note " * 40)
    assert out[-1] == "  x = 1" and all(x.lstrip().startswith("!") for x in out[:-1])


def test_too_many_continuations_is_an_error():
    with pytest.raises(ValueError, match="continuation"):
        wrap_free_line("  call k(" + ", ".join(f"a{i:07d}" for i in range(6000)) + ")")


@needs_gfortran
def test_gfortran_compiles_wrapped_statements(tmp_path):
    names = [f"variable_with_a_long_name_{i}" for i in range(50)]
    lit = "'" + "it''s, " * 40 + "'"
    body = [
        "subroutine w(" + ", ".join(names) + ")",
        "  implicit none",
        "  real(8), intent(inout) :: " + ", ".join(names),
        "  character(len=400) :: c",
        f"  c = {lit} ! " + "comment " * 30,
        "  " + names[0] + " = " + " + ".join(names[1:]) + " + len_trim(c)",
        "end subroutine w",
    ]
    text = "\n".join(body) + "\n"
    assert _compile(tmp_path, "raw.f90", text).returncode != 0  # the unwrapped text is rejected
    wrapped = wrap_free_source(text)
    assert max(len(x) for x in wrapped.split("\n")) <= FREE_LIMIT
    res = _compile(tmp_path, "w.f90", wrapped)
    assert res.returncode == 0, res.stderr


def _long_kernel(tmp_path: Path):
    args = [f"x_min_of_block_{i}" for i in range(NARGS)]
    members = [f"member_{i}" for i in range(NCOMMON)]
    src = ["subroutine many_args(" + ", ".join(args) + ", out)",
           "  implicit none",
           "  integer, intent(in) :: " + ", ".join(args),
           "  integer, intent(out) :: out",
           "  integer :: " + ", ".join(members),
           "  common /a_block_with_many_members/ " + ", ".join(members),
           "  integer :: i",
           "  out = 0",
           "  do i = 1, 3",
           "    out = out + " + " + ".join(args[:40]) + " + member_0 + member_89",
           "  end do",
           "end subroutine many_args"]
    # the user's source may be long: it is theirs, compiled with their flags
    path = tmp_path / "many.f90"
    path.write_text(wrap_free_source("\n".join(src) + "\n"))
    sf = parse_file(str(path), use_cache=False)
    return next(k for k in sf.kernels if k.name == "many_args"), sf


@needs_gfortran
@pytest.mark.integration
def test_reference_driver_of_long_argument_list_and_common_builds_and_runs(tmp_path):
    from port_fortran.harness.core import Harness
    from port_fortran.harness.drivers import fortran_driver
    from port_fortran.harness.inputs import Case, make_inputs, read_records, write_records

    kernel, sf = _long_kernel(tmp_path)
    h = Harness(kernel, sf, tmp_path / "port")
    drv = fortran_driver(h.kernel)
    assert max(len(x) for x in drv.split("\n")) <= FREE_LIMIT
    assert sum(1 for a in h.kernel.args if a.common) == 2  # member_0 and member_89 driven
    exe = h.build_reference()
    recs, _ = make_inputs(h.kernel, h.spec, Case(seed=5, sizes={}, choices={}))
    write_records(tmp_path / "in.bin", recs)
    res = subprocess.run([str(exe), "run", str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    names = [a.name for a in h.kernel.args]
    out = {r.name: r for r in read_records(tmp_path / "out.bin", names)}
    vals = {r.name: r.data for r in recs}
    expect = 3 * (sum(int(vals[a]) for a in names[:40]) + int(vals["member_0"]) + int(vals["member_89"]))
    assert int(out["out"].data) == expect


@needs_gfortran
def test_interface_module_of_long_argument_list_compiles(tmp_path):
    from port_fortran.translate import translate_kernel

    kernel, sf = _long_kernel(tmp_path)
    port = translate_kernel(kernel, sf)
    mod = port.files["many_args_kokkos_mod.f90"]
    assert max(len(x) for x in mod.split("\n")) <= FREE_LIMIT
    res = _compile(tmp_path, "many_args_kokkos_mod.f90", mod)
    assert res.returncode == 0, res.stderr
