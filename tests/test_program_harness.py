"""The harness links what a routine needs from the program: the original objects of the
files defining its callees (transitively, main programs renamed away), module files
compiled first, stubs for routines no file defines; and the whole pipeline on two trees
(a callee of the other tree, a module of another file, extents from a call site and from
the configuration), verified."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from port_fortran.fortran.program_build import build_program

DATA = Path(__file__).resolve().parent / "data" / "program"
A, B = DATA / "tree_a", DATA / "tree_b"

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PORT_FORTRAN_NO_PARSE_CACHE", "1")  # its own parses; the Kokkos installs stay found


def _gfortran_or_skip():
    if shutil.which("gfortran") is None:
        pytest.skip("gfortran not installed")


def test_reference_links_callees_of_other_trees_and_stubs_externals(tmp_path):
    _gfortran_or_skip()
    from port_fortran.harness import Harness
    from port_fortran.harness.inputs import Case, make_inputs, read_records, write_records

    prog = build_program([A, B])
    prog.objects_dir = str(tmp_path / "objects")
    k, sf = prog.load(A / "kernels.f", "scale3")
    h = Harness(k, sf, tmp_path / "scale3", program=prog)
    exe = h.build_reference()
    links = h.tree_objects().link_set(str(A / "kernels.f"))
    assert [Path(f).name for f in links.files] == ["kernels.f", "helpers.f"]
    # scale2 (same file) reaches report -> mpi_barrier, mdot calls ddot: stubbed, never run by scale3
    assert links.stubs == ["ddot_", "mpi_barrier_"]
    assert any("mpi_barrier" in n for n in h.link_notes)
    # helpers.f holds a main program: renamed in its object, the driver's main is the one linked
    nm = subprocess.run(["nm", "-P", "-g", str(h.tree_objects().object_path(str(B / "helpers.f")))],
                        capture_output=True, text=True).stdout
    names = [line.split()[0] for line in nm.splitlines() if line.strip()]
    assert "main" not in names and any(n.startswith("pf_user_") and n.endswith("_main") for n in names)
    recs, _ = make_inputs(h.kernel, h.spec, Case(seed=1, sizes={"n": 5}, choices={}))
    write_records(tmp_path / "in.bin", recs)
    subprocess.run([str(exe), "run", str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    n, x, y = read_records(tmp_path / "out.bin", ["n", "x", "y"])
    assert (y.data == 2 * x.data + 1).all()  # twice() from tree B really ran
    # a kernel that calls an external: the reference links, and says so when it runs it
    k2, _ = prog.load(A / "kernels.f", "mdot")
    h2 = Harness(k2, sf, tmp_path / "mdot", program=prog)
    exe2 = h2.build_reference()
    recs, _ = make_inputs(h2.kernel, h2.spec, Case(seed=1, sizes={"n": 3}, choices={}))
    write_records(tmp_path / "in2.bin", recs)
    res = subprocess.run([str(exe2), "run", str(tmp_path / "in2.bin"), str(tmp_path / "o2.bin")],
                         capture_output=True, text=True)
    assert res.returncode == 86 and "ddot is not defined by any file of the tree (external)" in res.stderr


def test_modules_of_other_files_compile_first(tmp_path):
    _gfortran_or_skip()
    from port_fortran.harness import Harness

    prog = build_program([A, B])
    prog.objects_dir = str(tmp_path / "objects")
    k, sf = prog.load(A / "clip.f90", "clip")
    h = Harness(k, sf, tmp_path / "clip", program=prog)
    h.build_reference()
    tree = h.tree_objects()
    assert (tree.mod_dir / "limits_mod.mod").is_file()
    assert [Path(f).name for f in tree.link_set(str(A / "clip.f90")).files] == ["clip.f90", "limits_mod.f90"]
    # objects are cached for the run: a second kernel recompiles nothing
    before = {p: p.stat().st_mtime_ns for p in Path(tree.root).glob("*.o")}
    Harness(*prog.load(A / "kernels.f", "scale3"), tmp_path / "s3", program=prog).build_reference()
    after = {p: p.stat().st_mtime_ns for p in Path(tree.root).glob("*.o")}
    assert all(after[p] == t for p, t in before.items())


def test_two_trees_ported_and_verified(tmp_path):
    from port_fortran.build_runner.kokkos import find_install
    from port_fortran.cli import main

    if find_install("serial") is None:
        pytest.skip("no Kokkos install with the Serial backend (set Kokkos_ROOT)")
    cfg = tmp_path / "pf.yaml"
    cfg.write_text("bench: false\noptimize: false\nroutines:\n  gather2:\n    args:\n      src: {extent: k}\n")
    out = tmp_path / "out"
    args = [str(A), str(B), "--backends", "serial", "--out", str(out), "--config", str(cfg), "--quiet"]
    for k in ("scale3", "clip", "gather", "gather2"):
        args += ["--kernel", k]
    rc = main(args)
    doc = json.loads((out / "report.json").read_text())
    status = {k["name"]: (k["status"], k["reason"]) for k in doc["kernels"]}
    assert rc == 0, status
    assert all(s == "verified" for s, _ in status.values()), status
    scale3 = next(k for k in doc["kernels"] if k["name"] == "scale3")
    assert scale3["calls"]["callees"][0]["where"] == "tree"
    spec = (out / "tree_a" / "gather" / "gather" / "gather.spec.yaml").read_text()
    assert "src: {role: array, intent: in, range: [-1.0, 1.0], dims: ['1:m']}" in spec
    spec2 = (out / "tree_a" / "gather" / "gather2" / "gather2.spec.yaml").read_text()
    assert "dims: ['1:k']" in spec2
    assert any(n["code"] == "extent-from-config" for n in doc["program"]["notes"])


def test_a_file_that_does_not_compile_is_left_out_unless_the_kernel_calls_into_it(tmp_path):
    _gfortran_or_skip()
    from port_fortran.errors import UserError
    from port_fortran.harness import Harness

    (tmp_path / "k.f").write_text(
        "      subroutine quiet(n, x)\n      integer n, i\n      real x(n)\n      do i = 1, n\n"
        "         x(i) = 2 * x(i)\n      end do\n      end\n"
        "      subroutine noisy(n, x)\n      integer n\n      real x(n)\n      call shout(n)\n      end\n")
    (tmp_path / "g.f").write_text("      subroutine shout(n)\n      include 'nowhere.h'\n      end\n")
    prog = build_program([tmp_path])
    prog.objects_dir = str(tmp_path / "objects")
    h = Harness(*prog.load(tmp_path / "k.f", "quiet"), tmp_path / "quiet", program=prog)
    h.build_reference()  # g.f is left out: quiet never reaches shout (stubbed)
    assert any("g.f does not compile" in n for n in h.link_notes)
    h2 = Harness(*prog.load(tmp_path / "k.f", "noisy"), tmp_path / "noisy", program=prog)
    with pytest.raises(UserError, match=r"(?s)g\.f: compiling the original failed .*nowhere\.h"):
        h2.build_reference()
