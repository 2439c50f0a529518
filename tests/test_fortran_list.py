"""``port-fortran list``: kernels of files and trees, errors with file/line, exit codes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from port_fortran.cli import main
from port_fortran.fortran import discover, parse_file

SAMPLES = Path(__file__).resolve().parent.parent / "fortran_kernels"


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PORT_FORTRAN_CACHE", str(tmp_path / "cache"))


def test_syntax_error_exit_2_and_other_files_listed(tmp_path, capsys):
    (tmp_path / "good.f90").write_text("subroutine good(n, x)\n  integer n\n  real x(n)\n  x(1) = n\nend subroutine\n")
    (tmp_path / "bad.f").write_text("      SUBROUTINE BAD(X)\n      X = (1 + \n      END\n")
    (tmp_path / "zz.f90").write_text("subroutine later(y)\n  real y\n  y = 2\nend subroutine\n")
    rc = main(["list", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert f"{tmp_path / 'bad.f'}:2: error: syntax error" in err and "X = (1 +" in err
    assert "subroutine good(n:integer(4)(0)/in, x:real(4)(1)/out)" in out
    assert "subroutine later(" in out


def test_list_line_shows_loops_and_unsupported(tmp_path, capsys):
    (tmp_path / "k.f").write_text(
        "      SUBROUTINE K(N, A, S)\n"
        "      DOUBLE PRECISION A(N), S\n"
        "      EQUIVALENCE (Q, R)\n"
        "      S = 0\n"
        "      DO 10 I = 1, N\n"
        "         S = S + A(I)\n"
        "   10 CONTINUE\n"
        "      DO 20 I = 2, N\n"
        "         A(I) = A(I-1)\n"
        "   20 CONTINUE\n"
        "      END\n")
    rc = main(["list", str(tmp_path / "k.f")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "L5:i=parallel[sum:s]" in out and "L8:i=serial[loop-carried-dependence]" in out
    assert "unsupported: L3:equivalence" in out


def test_list_json(tmp_path, capsys):
    (tmp_path / "k.f90").write_text("subroutine k(n, a)\n  integer n, i\n  real a(n)\n  do i = 1, n\n"
                                    "    a(i) = i\n  end do\nend subroutine\n")
    assert main(["list", "--json", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    k = data[0]["kernels"][0]
    assert k["name"] == "k" and k["args"][1] == {"name": "a", "type": "real(4)", "rank": 1, "intent": "out",
                                                 "intent_declared": False}
    assert k["loops"][0]["parallel"] and k["loops"][0]["line"] == 4


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="fortran_kernels/ not present")
def test_list_covers_every_sample_file(capsys):
    rc = main(["list", str(SAMPLES)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    files = discover([SAMPLES])
    assert len(files) >= 20
    for f in files:
        assert str(f) in out, f"{f} not listed"


@pytest.mark.skipif(not (SAMPLES / "EXPECTED.yaml").is_file(), reason="no EXPECTED.yaml")
def test_samples_expected_verdicts():
    """The front end finds every kernel of the oracle, and the refusals carry their code."""
    import yaml

    expected = yaml.safe_load((SAMPLES / "EXPECTED.yaml").read_text())
    include = [SAMPLES / "include"]
    parsed = {}
    for e in expected:
        f = e["file"]
        if f not in parsed:
            parsed[f] = parse_file(SAMPLES / f, include_dirs=include)
            assert not parsed[f].errors, parsed[f].errors
        ks = {k.name: k for k in parsed[f].kernels}
        for k in ks.values():
            for d in k.loops():  # every serial loop says why, with a line
                assert d.info.parallel == (not d.info.reasons)
                assert all(r.code and r.message and r.line for r in d.info.reasons)
        assert e["kernel"] in ks, (f, e["kernel"])
        k = ks[e["kernel"]]
        if e["outcome"] == "refuse" and e.get("reason_code") in ("io-in-kernel", "equivalence", "entry"):
            assert e["reason_code"] in {u.construct for u in k.unsupported}
        if e["outcome"] == "port":
            loops = k.loops()
            pats = set(e.get("patterns") or [])
            if "reduce" in pats:
                assert any(d.info.reductions or any(r.code == "loc-reduction" for r in d.info.reasons)
                           for d in loops), e["kernel"]
            if "atomic" in pats:
                assert any(d.info.scattered for d in loops), e["kernel"]
            if "mdrange" in pats:
                assert any(d.info.tightly_nested_parallel >= 2 for d in loops), e["kernel"]


def test_list_with_include_dir_and_define(tmp_path, capsys):
    inc = tmp_path / "hdr"
    inc.mkdir()
    (inc / "sizes.inc").write_text("      INTEGER NB\n      PARAMETER (NB = 4)\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.F").write_text(
        "      SUBROUTINE K(X)\n"
        "      INCLUDE 'sizes.inc'\n"
        "#ifdef USE_DP\n"
        "      DOUBLE PRECISION X(NB)\n"
        "#else\n"
        "      REAL X(NB)\n"
        "#endif\n"
        "      X(1) = 0\n"
        "      END\n")
    assert main(["list", str(src)]) == 2  # the include is not found without -I
    assert "sizes.inc' not found" in capsys.readouterr().err
    assert main(["list", "-I", str(inc), "-D", "USE_DP", str(src)]) == 0
    assert "x:real(8)(1)/out" in capsys.readouterr().out
    assert main(["list", "-I", str(inc), str(src)]) == 0
    assert "x:real(4)(1)/out" in capsys.readouterr().out


def test_default_include_dirs(tmp_path):
    from port_fortran.fortran import default_include_dirs

    (tmp_path / "a" / "include").mkdir(parents=True)
    (tmp_path / "b" / "inc").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    assert default_include_dirs([tmp_path]) == [str(tmp_path / "a" / "include"), str(tmp_path / "b" / "inc")]
    assert default_include_dirs([tmp_path / "src"]) == []


def test_conditionally_parallel_loops_are_never_listed_plain_parallel(capsys):
    """A loop independent only for some run-time values says so: parallel[if ...] (or the
    condition among the reasons), and in JSON parallel is false with the condition beside."""
    versions = Path(__file__).resolve().parent / "data" / "translate" / "versions.f"
    rc = main(["list", str(SAMPLES / "blas1.f"), str(SAMPLES / "zblas1.f"), str(versions)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "L24:i=serial[induction-variable,if incy /= 0]" in out  # daxpy: rewrite iy, then incy /= 0
    assert "L17:i=parallel[if incy /= 0]" in out  # zaxpy
    assert "L37:i=parallel[if koff == 0 .or. abs(koff) >= n]" in out
    assert "L45:j=parallel[if abs(lda) >= m](L46:i=parallel)" in out
    assert "L40:j=parallel(L41:i=parallel)" in out  # flattened with n rows: proven
    assert main(["list", "--json", str(SAMPLES), str(versions)]) == 0
    data = json.loads(capsys.readouterr().out)
    guarded = 0

    def walk(loops):
        nonlocal guarded
        for d in loops:
            if d.get("condition"):
                guarded += 1
                assert d["parallel"] is False and d["condition_args"]
                assert any(r["code"] == "conditional-independence" for r in d["reasons"])
            walk(d.get("inner", []))

    for f in data:
        for k in f["kernels"]:
            walk(k["loops"])
    assert guarded >= 7


def test_list_finds_modules_in_the_other_files_given(tmp_path, capsys):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "prec.f90").write_text("module prec\n  integer, parameter :: rk = selected_real_kind(12)\n"
                                               "end module prec\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.f90").write_text("subroutine k(n, a)\n  use prec\n  integer n\n  real(rk) a(n)\n"
                                            "  a(1) = 1\nend subroutine\n")
    assert main(["list", str(tmp_path / "src"), str(tmp_path / "lib")]) == 0
    assert "subroutine k(n:integer(4)(0)/in, a:real(8)(1)/out)" in capsys.readouterr().out
    # given alone, the kernel is refused with the reason; a note names the missing module
    assert main(["list", str(tmp_path / "src")]) == 0
    out, err = capsys.readouterr()
    assert "unsupported: L4:unknown-kind" in out and "k.f90:2: note: module prec is not in this file" in err


def test_list_of_one_file_finds_the_modules_beside_it(tmp_path, capsys):
    (tmp_path / "prec.f90").write_text("module prec\n  integer, parameter :: rk = 8\nend module prec\n")
    (tmp_path / "k.f90").write_text("subroutine k(a)\n  use prec\n  real(rk) a\n  a = 1\nend subroutine\n")
    assert main(["list", str(tmp_path / "k.f90")]) == 0
    assert "subroutine k(a:real(8)(0)/out)" in capsys.readouterr().out
