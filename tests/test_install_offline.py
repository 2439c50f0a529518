"""The cluster install, end to end: as an unprivileged user, with no network index (pip
sees only the wheelhouse `make wheelhouse` writes) and no system CMake on PATH, a fresh
venv gets port-fortran with `pip install --no-index --find-links`, then `port-fortran
doctor`, `port-fortran kokkos install` (Kokkos from the wheelhouse, into the user's own
cache), a port of a sample kernel proven end to end, and its Python module built and
called. The wheelhouse holds this tree's dependencies; the port-fortran wheel is built
from the tree itself, so the test checks the current code.

Run as root it switches to the `nobody` user; run as anyone else it is that user."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
WHEELHOUSE = Path(os.environ.get("PF_WHEELHOUSE", REPO / "wheelhouse"))
CMAKE_NAMES = {"cmake", "ctest", "cpack", "ccmake", "cmake-gui"}


def _user():
    if os.geteuid() != 0:
        return None  # already unprivileged
    return pwd.getpwnam("nobody")


def _as_user(user, cmd, env, cwd, timeout=900):
    kw = {} if user is None else {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    t0 = time.monotonic()
    res = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, **kw)
    return res, time.monotonic() - t0


def _python_for(user, env, cwd) -> str:
    """An interpreter of this Python's version the user can run (root's own, e.g. under
    /root/.pyenv, is often out of a service user's reach)."""
    ver = f"{sys.version_info.major}.{sys.version_info.minor}"
    for cand in (os.path.realpath(sys._base_executable), shutil.which(f"python{ver}"), f"/usr/bin/python{ver}"):
        if cand and os.path.exists(cand):
            try:
                res, _ = _as_user(user, [cand, "-c", "import venv, ensurepip"], env, cwd, timeout=60)
            except PermissionError:
                continue
            if res.returncode == 0:
                return cand
    pytest.skip(f"no Python {ver} with venv that the unprivileged user can run")


def _shadow_path(bindir: Path) -> str:
    """The system's tools without CMake: what a login node without a (new enough) CMake has."""
    bindir.mkdir()
    seen = set()
    for d in ("/usr/local/bin", "/usr/bin", "/bin"):
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if name in CMAKE_NAMES or name in seen:
                continue
            seen.add(name)
            os.symlink(os.path.join(d, name), bindir / name)
    return str(bindir)


@pytest.mark.skipif(not (WHEELHOUSE / ".complete").is_file(),
                    reason=f"no wheelhouse at {WHEELHOUSE}: `make wheelhouse` writes it (`make test` does)")
def test_unprivileged_offline_install_ports_a_kernel():
    user = _user()
    root = Path(tempfile.mkdtemp(prefix="pf-offline-"))
    try:
        os.chmod(root, 0o755)
        home, work, links = root / "home", root / "work", root / "links"
        for d in (home, work, links):
            d.mkdir()
        # the wheelhouse without its port-fortran wheel, plus a wheel of this tree
        for f in WHEELHOUSE.iterdir():
            if f.is_file() and not f.name.startswith(("port_fortran-", ".")):
                shutil.copy2(f, links / f.name)
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                                "-w", str(links), str(REPO)], capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stderr
        shutil.copy2(REPO / "fortran_kernels" / "blas1.f", work / "blas1.f")
        (work / "fast.yaml").write_text("bench: false\noptimize: false\n")
        env = {"HOME": str(home), "PATH": _shadow_path(root / "bin"), "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
               "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(links), "PIP_CONFIG_FILE": os.devnull,
               "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "OMP_PROC_BIND": "false"}
        if user is not None:
            subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(root)], check=True)
        python = _python_for(user, env, work)
        venv = root / "venv"
        times = {}
        steps = [
            ("venv", [python, "-m", "venv", str(venv)]),
            ("pip install", [str(venv / "bin" / "pip"), "install", "-q", "port-fortran"]),
        ]
        for name, cmd in steps:
            res, times[name] = _as_user(user, cmd, env, work)
            assert res.returncode == 0, f"{name}: {res.stdout}\n{res.stderr}"
        env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
        pf = str(venv / "bin" / "port-fortran")
        res, _ = _as_user(user, [pf, "doctor", "--backends", "serial", "--json"], env, work)
        import json

        doc = json.loads(res.stdout)
        assert doc["tools"]["cmake"]["source"] == "python-package", doc["tools"]["cmake"]
        assert str(venv) in doc["tools"]["cmake"]["path"]
        assert [m["what"] for m in doc["missing"] if m["required"]] == ["Kokkos install with serial"]
        assert res.returncode == 3
        res, times["kokkos install"] = _as_user(user, [pf, "kokkos", "install", "--backends", "serial"], env, work)
        assert res.returncode == 0, res.stdout + res.stderr
        assert f"source from {links}" in res.stdout and str(home / ".cache" / "port-fortran") in res.stdout
        res, _ = _as_user(user, [pf, "doctor", "--backends", "serial"], env, work)
        assert res.returncode == 0 and "ready for backends serial" in res.stdout, res.stdout
        res, times["port daxpy"] = _as_user(user, [pf, "blas1.f", "--kernel", "daxpy", "--backends", "serial",
                                                   "--out", "out", "--config", "fast.yaml", "--quiet", "--python"],
                                            env, work)
        assert res.returncode == 0, res.stdout + res.stderr
        assert "blas1.f:daxpy │ verified" in res.stdout
        call = ("import numpy as np, kokkos_ports as m; y = np.ones(4); "
                "m.daxpy(4, 2.0, np.arange(4.0), 1, y, 1); print(m.__backend__, y.tolist())")
        res, _ = _as_user(user, [str(venv / "bin" / "python"), "-c", call],
                          dict(env, PYTHONPATH=str(work / "out" / "python")), work)
        assert res.returncode == 0, res.stderr
        assert res.stdout.split("\n")[-2] == "serial [1.0, 3.0, 5.0, 7.0]"
        print("timings (s): " + ", ".join(f"{k} {v:.0f}" for k, v in times.items()))
    finally:
        shutil.rmtree(root, ignore_errors=True)
