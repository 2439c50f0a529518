"""Main programs in a run (pipeline/program_job.py): a hybrid port proven by running the
program with the configured arguments, the nests its run never reaches kept in Fortran, a
run that reaches none refused; DO CONCURRENT read as a nest of DO loops."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from port_fortran.config import Config
from port_fortran.errors import UserError

DATA = Path(__file__).parent / "data" / "programs"


def _kokkos_or_skip():
    from port_fortran.build_runner.kokkos import find_install

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend (set Kokkos_ROOT)")


def _run(tmp_path, config: str) -> dict:
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n" + config)
    out = tmp_path / "out"
    main([str(DATA), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet",
          "--kernel", "sumsprog"])
    doc = json.loads((out / "report.json").read_text())
    return {k["name"]: k for k in doc["kernels"]}


def test_main_program_is_proven_by_its_run_and_unreached_nests_stay_fortran(tmp_path):
    _kokkos_or_skip()
    ks = _run(tmp_path, "programs:\n  sumsprog: {args: '1000', ignore: time}\n")
    k = ks["sumsprog"]
    assert k["status"] == "verified", k["reason"]
    assert k["mode"] == "hybrid"
    lines = sorted(o["line"] for o in k["hybrid"]["outlined"])
    assert lines == [19, 28]  # the DO CONCURRENT and the reduction
    kept = {x["line"]: x["code"] for x in k["hybrid"]["kept"]}
    assert kept[23] == "not-exercised"  # under n > 100000: the run never got there
    assert "reduce" in k["patterns"] and "parallel_for" in k["patterns"]
    outcome = json.loads(next((tmp_path / "out").rglob("sumsprog/outcome.json")).read_text())
    assert outcome["verdicts"][0]["calls"] == {"sumsprog_l19_kokkos": 1, "sumsprog_l28_kokkos": 1}


def test_a_run_that_reaches_no_nest_is_refused_naming_the_configuration(tmp_path):
    _kokkos_or_skip()
    ks = _run(tmp_path, "")  # no arguments: the program prints its usage and stops
    k = ks["sumsprog"]
    assert k["status"] == "refused"
    assert k["reason_code"] == "program-not-exercised"
    assert "programs: {sumsprog: {args:" in k["reason"]


def test_programs_configuration_is_checked():
    cfg = Config.from_dict({"programs": {"Heat": {"args": "10 20", "ignore": "time|rate", "rtol": 1e-6}}})
    assert cfg.programs == {"heat": {"args": ["10", "20"], "ignore": ["time|rate"], "rtol": 1e-6}}
    with pytest.raises(UserError, match="programs.heat.argz"):
        Config.from_dict({"programs": {"heat": {"argz": "1"}}})
    with pytest.raises(UserError, match="not a regular expression"):
        Config.from_dict({"programs": {"heat": {"ignore": "(unclosed"}}})


def test_do_concurrent_is_a_nest_of_do_loops(tmp_path):
    from port_fortran.fortran import ir, parse_file
    from port_fortran.fortran.analysis import analyse_kernel

    src = tmp_path / "dc.f90"
    src.write_text("subroutine dc(n, a, c)\n  integer :: n, i, j\n  real(8) :: a(n,n), c(n)\n"
                   "  do concurrent (j = 1:n, i = 1:n:2)\n    a(i,j) = 2 * a(i,j)\n  end do\n"
                   "  do concurrent (i = 1:n, c(i) > 0)\n    c(i) = sqrt(c(i))\n  end do\n"
                   "end subroutine\n")
    sf = parse_file(str(src))
    k = sf.kernels[0]
    assert not k.unsupported
    outer, second = [s for s in k.body if isinstance(s, ir.Do)]
    assert (outer.var, outer.line) == ("j", 4)
    inner = outer.body[0]
    assert isinstance(inner, ir.Do) and inner.var == "i" and inner.step is not None
    assert isinstance(second.body[0], ir.If)  # the mask
    analyse_kernel(k, sf)
    assert outer.info.parallel and second.info.parallel


def test_an_original_whose_output_changes_between_runs_proves_nothing(tmp_path):
    _kokkos_or_skip()
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    main([str(DATA / "clockprog.f90"), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet"])
    k = json.loads((out / "report.json").read_text())["kernels"][0]
    assert k["status"] == "refused" and k["reason_code"] == "original-nondeterministic", k["reason"]
    assert "changes from run to run" in k["reason"] and "nothing is left to compare" in k["reason"]


def test_the_openmp_directive_of_a_kept_loop_around_outlined_nests_is_removed(tmp_path):
    from port_fortran.cli import main

    out = tmp_path / "port"
    assert main(["translate", str(DATA / "ompkept.f90"), "--mode", "hybrid", "-o", str(out)]) == 0
    out = out / "ompkept"
    text = (out / "ompkept.f90").read_text()
    assert "!$omp parallel do" not in text and "!$omp end parallel do" not in text
    assert "directive of the loop of line 7 removed" in text
    info = json.loads((out / "hybrid.json").read_text())
    assert [o["line"] for o in info["outlined"]] == [9]
    assert any(k["code"] == "loop-directive-removed" and k["line"] == 6 for k in info["kept"])


def test_internal_procedures_are_ported_and_proven_with_their_program(tmp_path):
    """miniWeather's shape: the work is in CONTAINed procedures using the program's variables;
    their nests are outlined in place and the program's run proves them, each procedure
    getting its own row."""
    _kokkos_or_skip()
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    main([str(DATA / "hostprog.f90"), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet"])
    ks = {k["name"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert ks["hostprog"]["status"] == "verified", ks["hostprog"]["reason"]
    # halo's periodic copy (state(1 - ll) = state(nx + 1 - ll), state(nx + ll) = state(ll)) writes
    # the halo cells and reads interior ones: independent, a kernel like the others
    for name in ("init", "halo", "tendencies", "reduce_total"):
        assert ks[name]["status"] == "verified" and ks[name]["mode"] == "hybrid", (name, ks[name]["reason"])
    assert "reduce" in ks["reduce_total"]["patterns"]
    outlined = {o["routine"] for o in ks["hostprog"]["hybrid"]["outlined"]}
    assert {"init", "halo", "tendencies", "reduce_total"} <= outlined


def test_an_original_that_changes_only_after_its_first_runs_is_caught_when_the_port_differs(tmp_path):
    """The original's first runs may agree by chance (ParRes' stencil-stdpar printed the
    same wrong norm four times, then 'Solution validates'): when the modern program's
    output differs, the original runs again before the port is blamed."""
    _kokkos_or_skip()
    from port_fortran.cli import main

    counter = tmp_path / "runs.txt"
    cfg = tmp_path / "pf.yaml"
    cfg.write_text(f"bench: false\noptimize: false\nprograms:\n  latewrong: {{args: '{counter}'}}\n")
    out = tmp_path / "out"
    main([str(DATA / "latewrong.f90"), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet"])
    k = json.loads((out / "report.json").read_text())["kernels"][0]
    assert k["status"] == "refused" and k["reason_code"] == "original-nondeterministic", k["reason"]
    # its later runs differ: either the check before blaming the port sees it, or the run
    # that looks for timings does and leaves nothing to compare
    assert "changes from run to run" in k["reason"]


def test_timed_benchmark_is_proven_by_its_array_with_its_timing_left_out(tmp_path):
    # tests/data/timed: a C clock times the kernel, the seconds go to standard output and
    # the result array to standard error; the -O0 build of the original shows which
    # number is a timing, and the array is compared
    _kokkos_or_skip()
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    main([str(DATA.parent / "timed"), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet"])
    ks = {k["name"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert ks["tmatmul"]["status"] == "verified", ks["tmatmul"]["reason"]
    cmp = json.loads(next(out.rglob("tmatmul/outcome.json")).read_text())["verdicts"][0]["comparison"]
    assert cmp["masked"] == 1 and cmp["numbers_compared"] == 23 * 7


def test_internal_procedures_using_nothing_of_their_program_are_proven_alone(tmp_path):
    """A benchmark's kernels written inside the program that times them (the program
    prints only the time, which proves nothing): those using none of the program's
    variables are proven by the differential harness like any routine, from a copy of the
    file with the program made a module; the one reading the program's variable still
    depends on the program's run. Reasons name the user's file, not the copy."""
    _kokkos_or_skip()
    from port_fortran.cli import main

    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\n")
    out = tmp_path / "out"
    src = DATA.parent / "lifted"
    before = (src / "lkern.F90").read_text()
    main([str(src), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet"])
    ks = {k["name"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    for name in ("kscale", "kstencil"):
        assert ks[name]["status"] == "verified" and ks[name]["mode"] == "full", (name, ks[name]["reason"])
        assert "mdrange" in ks[name]["patterns"]
        assert ks[name]["file"] == "lkern.F90" and ks[name]["line_start"] == {"kscale": 26, "kstencil": 38}[name]
    assert ks["kuses"]["status"] == "refused" and "internal procedure kuses of program lkern" in ks["kuses"]["reason"]
    assert ks["lkern"]["status"] == "refused"  # it prints only a timing
    assert (src / "lkern.F90").read_text() == before  # the user's file is never touched
    assert "module pf_host_lkern" in (out / "lifted" / "lkern.F90").read_text()
