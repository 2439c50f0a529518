"""Graph mechanics with injected stages: routing, bounds, optimizer keep rule, checkpoint
resume, errors. Fast: no compiler runs."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_pipeline_fakes import FakeStages, fake_source  # noqa: E402

from port_fortran.config import Config  # noqa: E402
from port_fortran.pipeline.graph import port_dir_for, port_kernel  # noqa: E402
from port_fortran.pipeline.state import KernelJob  # noqa: E402
from port_fortran.reports.db import RunDB  # noqa: E402


def make_job(tmp_path: Path, name: str, directives: list[str], **cfg) -> tuple[KernelJob, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / f"{name}.f"
    src.write_text(fake_source({name: directives}))
    out = tmp_path / "out"
    db = RunDB.in_dir(out)
    config = Config.from_dict({"backends": ["serial", "openmp"], "optimizer_variants": 0, **cfg})
    run_id = db.start_run(config=config.to_dict())
    job = KernelJob(run_id, str(out), str(src), src.name, name, config.to_dict(),
                    str(port_dir_for(out, src.name, name)))
    db.upsert_kernel(run_id, job.kernel_id, src.name, name, 1, 8)
    db.close()
    return job, str(out)


def db_of(job):
    return RunDB.in_dir(job.out_dir)


def test_happy_path_visits_every_stage_once(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [])
    st = FakeStages()
    out = port_kernel(job, stages=st)
    assert out.status == "verified", out
    assert out.stages == ["translate:rules", "validate", "compile:serial", "compile:openmp", "run:serial",
                          "run:openmp", "optimize", "finalize"]
    db = db_of(job)
    k = db.kernel(job.run_id, job.kernel_id)
    assert k["status"] == "verified" and k["model"] == "rules"
    assert {v["backend"] for v in db.verdicts(job.run_id)} == {"serial", "openmp"}
    assert {t["variant"] for t in db.timings(job.run_id)} == {"fortran-serial", "kokkos-serial", "kokkos-openmp"}
    assert Path(job.port_dir, "axpy.kokkos.cpp").is_file()


def test_wrong_result_is_debugged_by_serialising_the_loop(tmp_path):
    job, _ = make_job(tmp_path, "scat", ["wrong-unless-serial"], bench=False)
    st = FakeStages()
    out = port_kernel(job, stages=st)
    assert out.status == "verified"
    h = out.stages
    assert h.index("debug:run") > h.index("run:serial")
    assert h[h.index("debug:run") + 1] == "validate"  # back through the validator, then the failing stage
    assert h[-2:] == ["run:openmp", "finalize"] and "optimize" not in h
    assert [c for c in st.calls if c[0] == "translate"] == [("translate", "scat", "default"),
                                                          ("translate", "scat", "all-serial")]
    attempts = db_of(job).attempts(job.run_id, job.kernel_id)
    assert [a["ok"] for a in attempts if a["stage"] == "debug"] == [1]


def test_compile_failure_routes_to_debug_and_back(tmp_path):
    job, _ = make_job(tmp_path, "brk", ["broken-unless-serial"], bench=False)
    out = port_kernel(job, stages=FakeStages())
    assert out.status == "verified"
    assert out.stages[:4] == ["translate:rules", "validate", "compile:serial", "debug:compile"]


def test_debug_rounds_are_bounded_per_stage(tmp_path):
    job, _ = make_job(tmp_path, "bad", ["always-wrong"], debug_rounds={"run": 1}, bench=False)
    out = port_kernel(job, stages=FakeStages())
    assert out.status == "failed"
    assert out.stages.count("debug:run") == 2  # one round used, the second visit gives up
    assert "y(3)" in out.reason and out.reason_code == "wrong-result"
    assert db_of(job).kernel(job.run_id, job.kernel_id)["status"] == "failed"


def test_refused_with_rules_only(tmp_path):
    job, _ = make_job(tmp_path, "gto", ["refuse"])
    out = port_kernel(job, stages=FakeStages())
    assert out.status == "refused" and out.reason_code == "early-exit"
    assert "GOTO" in db_of(job).kernel(job.run_id, job.kernel_id)["reason"]
    assert out.stages == ["translate:rules", "finalize"]


def test_original_never_finite_is_refused_with_its_code_not_debugged(tmp_path):
    job, _ = make_job(tmp_path, "ovf", ["original-not-finite"], bench=False)
    out = port_kernel(job, stages=FakeStages())
    assert out.status == "refused" and out.reason_code == "original-not-finite"
    assert "not finite" in out.reason and "ovf.f:1" in out.reason
    assert "debug:run" not in out.stages and out.stages[-2:] == ["run:serial", "finalize"]
    assert db_of(job).kernel(job.run_id, job.kernel_id)["reason_code"] == "original-not-finite"


def test_optimizer_keeps_only_a_verified_faster_variant(tmp_path):
    job, _ = make_job(tmp_path, "mm", ["nested"], optimizer_variants=3)
    out = port_kernel(job, stages=FakeStages())
    assert out.status == "verified"
    db = db_of(job)
    opt = [a for a in db.attempts(job.run_id) if a["stage"] == "optimize"]
    kept = [a for a in opt if a["ok"] and "variant" in a["detail"]]
    assert len(kept) == 1 and "tile-32x8" in kept[0]["detail"]
    # re-proved in the main port directory after keeping the variant
    assert out.stages.count("run:openmp") == 2
    assert "variant tile-32x8" in Path(job.port_dir, "mm.kokkos.cpp").read_text()
    ks = {t["variant"]: t["median_s"] for t in db.timings(job.run_id)}
    assert ks["kokkos-serial"] == 0.5


class TwoWins(FakeStages):
    """tile-32x8 halves the port's time, tile-64x4 quarters it (planned after it)."""

    def bench(self, kernel, source, port_dir, backends):
        out = super().bench(kernel, source, port_dir, backends)
        if "variant tile-64x4" in self._cpp(kernel, port_dir):
            for t in out[1:]:
                t.median_s = 0.25
        return out


def test_optimizer_keeps_the_fastest_of_the_variants_that_win(tmp_path):
    """Every planned rules variant is tried; the first win is not kept when a later one is
    faster (Kokkos' own policies had won dgemm on noise before register blocking was tried)."""
    from port_fortran.reports.collect import optimizer_variants

    job, _ = make_job(tmp_path, "mm", ["nested"], optimizer_variants=3)
    out = port_kernel(job, stages=TwoWins())
    assert out.status == "verified"
    assert "variant tile-64x4" in Path(job.port_dir, "mm.kokkos.cpp").read_text()
    rows = optimizer_variants([a for a in db_of(job).attempts(job.run_id)])
    by = {r["variant"]: r for r in rows}
    assert by["tile-64x4"]["kept"] and not by["tile-32x8"]["kept"]
    assert "not kept: tile-64x4 was faster (4.00x against 2.00x)" in by["tile-32x8"]["detail"]
    assert sum(r["kept"] for r in rows) == 1 and len(rows) == 3
    ks = {t["variant"]: t["median_s"] for t in db_of(job).timings(job.run_id)}
    assert ks["kokkos-serial"] == 0.25


def test_a_port_wrong_at_the_timing_sizes_is_debugged_before_it_is_timed(tmp_path):
    job, _ = make_job(tmp_path, "skp", ["wrong-large-unless-serial"])
    st = FakeStages()
    out = port_kernel(job, stages=st)
    assert out.status == "verified"
    h = out.stages
    assert h.index("debug:run") > h.index("run:serial")
    # no timing before the proof passed: the bench comes after the serialised port's proofs
    names = [c[0] for c in st.calls]
    first_bench = names.index("bench")
    assert [c for c in st.calls[:first_bench] if c[0] == "translate"][-1][2] == "all-serial"
    db = db_of(job)
    failed = [v for v in db.verdicts(job.run_id) if not v["passed"]]
    assert failed and "timing sizes" in failed[0]["reason"]
    assert all(t["proven_sizes"] for t in db.timings(job.run_id) if t["variant"].startswith("kokkos-"))


def test_optimizer_rejects_a_variant_wrong_at_the_timing_sizes(tmp_path):
    job, _ = make_job(tmp_path, "mm", ["nested", "tile-wrong-large"], optimizer_variants=3)
    st = FakeStages()
    out = port_kernel(job, stages=st)
    assert out.status == "verified"
    opt = [a for a in db_of(job).attempts(job.run_id) if a["stage"] == "optimize" and "tile-32x8" in a["detail"]]
    assert len(opt) == 1 and not opt[0]["ok"]
    assert "not verified at the timing sizes on serial" in opt[0]["detail"]
    # the wrong variant was never timed
    benched = [c[3] for c in st.calls if c[0] == "bench"]
    assert "tile-64x4" in benched and "tile-32x8" not in benched
    assert "variant tile-32x8" not in Path(job.port_dir, "mm.kokkos.cpp").read_text()


def test_optimizer_rejects_a_variant_within_the_spread(tmp_path):
    from port_fortran.agents.optimizer import is_better

    base = [{"variant": "kokkos-serial", "median_s": 1.0, "spread_s": 0.1}]
    assert not is_better([{"variant": "kokkos-serial", "median_s": 0.95, "spread_s": 0.02}], base)[0]
    assert is_better([{"variant": "kokkos-serial", "median_s": 0.8, "spread_s": 0.02}], base)[0]
    slower = base + [{"variant": "kokkos-openmp", "median_s": 1.0, "spread_s": 0.0}]
    cand = [{"variant": "kokkos-serial", "median_s": 0.5, "spread_s": 0.0},
            {"variant": "kokkos-openmp", "median_s": 1.5, "spread_s": 0.0}]
    assert not is_better(cand, slower)[0]


class Interrupt(BaseException):
    pass


class InterruptingStages(FakeStages):
    """Dies (like a killed process) the first time it builds for ``backend``."""

    def __init__(self, backend):
        super().__init__()
        self.backend, self.fired = backend, False

    def build(self, kernel, source, port_dir, backend):
        if backend == self.backend and not self.fired:
            self.fired = True
            raise Interrupt()
        return super().build(kernel, source, port_dir, backend)


def test_interrupted_kernel_resumes_from_its_last_finished_stage(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], bench=False)
    with pytest.raises(Interrupt):
        port_kernel(job, stages=InterruptingStages("openmp"))
    from port_fortran.pipeline.checkpoint import last_state

    saved = last_state(job.out_dir, job.run_id, job.kernel_id)
    assert saved["compiled"] == ["serial"] and saved["history"][-1] == "compile:serial"
    st = FakeStages()
    out = port_kernel(job, stages=st)
    assert out.resumed and out.status == "verified"
    # nothing before the interrupted node ran again
    assert [c[0] for c in st.calls] == ["build", "verify", "verify"]
    attempts = db_of(job).attempts(job.run_id, job.kernel_id)
    assert sum(1 for a in attempts if a["stage"] == "translate") == 1
    assert sum(1 for a in attempts if a["stage"] == "compile" and a["backend"] == "serial") == 1


def test_finished_kernel_is_not_repeated(tmp_path):
    job, _ = make_job(tmp_path, "axpy", [], bench=False)
    assert port_kernel(job, stages=FakeStages()).status == "verified"
    st = FakeStages()
    out = port_kernel(job, stages=st)
    assert out.resumed and out.status == "verified" and st.calls == []


def test_recursion_limit_stops_a_runaway_graph(tmp_path):
    job, _ = make_job(tmp_path, "bad", ["always-wrong"], debug_rounds=50, recursion_limit=12, bench=False)
    out = port_kernel(job, stages=FakeStages())
    assert out.status == "failed" and out.reason_code == "recursion-limit"


def test_a_broken_stage_is_an_error_not_a_debug_round(tmp_path):
    class Crashing(FakeStages):
        def verify(self, *a):
            raise RuntimeError("harness bug")

    job, _ = make_job(tmp_path, "axpy", [], bench=False)
    out = port_kernel(job, stages=Crashing())
    assert out.status == "error" and out.reason_code == "stage-error" and "harness bug" in out.reason
    assert db_of(job).kernel(job.run_id, job.kernel_id)["status"] == "error"


def test_a_crashing_optimizer_variant_keeps_the_verified_port(tmp_path):
    class CrashOnVariant(FakeStages):
        def translate(self, kernel, source, options):
            if options is not None and options.variant != "default":  # every optimizer variant
                raise RuntimeError("translator bug")
            return super().translate(kernel, source, options)

    job, _ = make_job(tmp_path, "mm", ["nested"], optimizer_variants=1)
    out = port_kernel(job, stages=CrashOnVariant())
    assert out.status == "verified"
    opt = [a for a in db_of(job).attempts(job.run_id) if a["stage"] == "optimize" and "variant" in a["detail"]]
    assert not opt[0]["ok"] and "translator bug" in opt[0]["detail"]


def test_port_dirs_keep_tree_directories():
    assert port_dir_for("/o", "vecops.F90", "waxpby") == Path("/o/vecops/waxpby")
    assert port_dir_for("/o", "a/util.f", "k") != port_dir_for("/o", "b/util.f", "k")
    assert port_dir_for("/o", "../x/util.f", "k") == Path("/o/x/util/k")


def test_attempts_are_numbered_per_stage_and_backend(tmp_path):
    job, _ = make_job(tmp_path, "scat", ["wrong-unless-serial"], bench=False)
    assert port_kernel(job, stages=FakeStages()).status == "verified"
    att = db_of(job).attempts(job.run_id, job.kernel_id)
    runs = [(a["backend"], a["attempt"], a["ok"]) for a in att if a["stage"] == "run"]
    assert runs == [("serial", 1, 0), ("serial", 2, 1), ("openmp", 1, 1)]
