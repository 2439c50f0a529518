"""Where kernels run: a local process pool, or Parsl on a workstation or a Slurm cluster.

``make_executor(kind, workers, **site)`` returns an object with
``submit(fn, *args) -> concurrent.futures.Future`` and ``shutdown()``, usable as a context
manager. ``fn`` must be a picklable top-level function (``port_kernel``).

* ``local``: a :class:`~concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start
  method (no state forked from the parent: safe with threads, SQLite and Parsl around).
* ``parsl``: a Parsl ``HighThroughputExecutor``. Its provider is ``LocalProvider`` (this
  machine) unless the site says ``provider: slurm``; then a ``SlurmProvider`` built from the
  site settings (partition, account, walltime, nodes_per_block, max_blocks, worker_init such
  as ``module load gcc kokkos``, cores_per_worker ...). Parsl's run directory and worker
  logs go under ``run_dir`` (the batch puts it in the output directory).

:func:`run_all` submits many calls and collects every outcome: an exception in one call
(or a worker that dies) becomes that call's failure and never stops the others.
"""
from __future__ import annotations

import concurrent.futures as cf
from concurrent.futures.process import BrokenProcessPool
import multiprocessing
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from ..errors import UserError

KINDS = ("local", "parsl")

#: site settings understood by the parsl executor, with their types (checked; errors name the key)
SITE_KEYS: dict[str, tuple[type, ...]] = {
    "provider": (str,),            # 'local' (default) | 'slurm'
    "partition": (str,),
    "account": (str,),
    "qos": (str,),
    "constraint": (str,),
    "walltime": (str,),            # 'HH:MM:SS'
    "nodes_per_block": (int,),
    "init_blocks": (int,),
    "min_blocks": (int,),
    "max_blocks": (int,),
    "cores_per_node": (int,),
    "mem_per_node": (int,),        # GB
    "gpus_per_node": (int,),
    "exclusive": (bool,),
    "scheduler_options": (str,),   # extra '#SBATCH ...' lines
    "worker_init": (str,),         # shell run before workers start, e.g. 'module load gcc kokkos'
    "cores_per_worker": (int, float),
    "mem_per_worker": (int, float),  # GB
    "workers_per_node": (int,),
    "launcher": (str,),            # 'srun' (default on slurm) | 'single'
    "address": (str,),             # address workers connect back to (default: this host)
    "interface": (str,),           # or the network interface to take it from, e.g. 'ib0'
    "python_path": (str,),         # directory holding the python that workers use (default: this one's)
    "label": (str,),
}


def check_site(site: dict, prefix: str = "site", file: str = "") -> dict:
    """Validate site settings; a :class:`UserError` naming the file and the bad key
    (``key 'site.partition'``; in a site file of its own the keys stand alone)."""
    head = f"{file}: " if file else ""

    def err(key: str, msg: str) -> UserError:
        name = f"{prefix}.{key}" if prefix and key else (key or prefix)
        return UserError(f"{head}key '{name}': {msg}")

    if not isinstance(site, dict):
        raise err("", "expected a mapping of settings (partition, account, walltime, ...)")
    for key, value in site.items():
        if key not in SITE_KEYS:
            raise err(key, f"unknown setting; known: {', '.join(sorted(SITE_KEYS))}")
        types = SITE_KEYS[key]
        if isinstance(value, bool) and bool not in types:
            value = None  # bool is an int subclass; refuse it where an int is wanted
        if value is None or not isinstance(value, types):
            names = " or ".join(t.__name__ for t in types)
            raise err(key, f"expected {names}, got {site[key]!r}")
    provider = site.get("provider", "local")
    if provider not in ("local", "slurm"):
        raise err("provider", f"expected 'local' or 'slurm', got {provider!r}")
    if site.get("launcher", "srun") not in ("srun", "single"):
        raise err("launcher", f"expected 'srun' or 'single', got {site['launcher']!r}")
    for key in ("nodes_per_block", "max_blocks", "workers_per_node"):
        if key in site and site[key] < 1:
            raise err(key, f"must be at least 1, got {site[key]}")
    return site


# --------------------------------------------------------------------------- local

def die_with_parent(parent: int) -> None:
    """A worker's initializer: end the worker when the run that started it ends (killed by
    a batch system's time limit, or by hand) instead of porting on as an orphan: a thread
    looks for the parent process every two seconds. (Not prctl's parent-death signal: it
    follows the thread that spawned the worker, and a pool spawns from whichever thread
    submits.)"""
    def watch() -> None:
        while os.getppid() == parent:
            threading.Event().wait(2.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="pf-parent-watch").start()


class LocalExecutor:
    """A spawn-based process pool. A pool broken by a dying worker is replaced on the next
    submit (:func:`run_all` resubmits the calls it lost once)."""

    kind = "local"

    def __init__(self, workers: int):
        self.workers = max(1, int(workers))
        self._ctx = multiprocessing.get_context("spawn")
        self._lock = threading.Lock()
        self._pool = self._new_pool()

    def _new_pool(self, workers: Optional[int] = None) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=workers or self.workers, mp_context=self._ctx,
                                      initializer=die_with_parent, initargs=(os.getpid(),))

    def submit(self, fn: Callable, *args: Any) -> cf.Future:
        with self._lock:
            try:
                return self._pool.submit(fn, *args)
            except BrokenProcessPool:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
                return self._pool.submit(fn, *args)

    def submit_isolated(self, fn: Callable, *args: Any) -> cf.Future:
        """Run one call in a process of its own (for a retry after a worker crash)."""
        pool = self._new_pool(1)
        fut = pool.submit(fn, *args)
        fut.add_done_callback(lambda _f: pool.shutdown(wait=False))
        return fut

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=not wait)

    def __enter__(self) -> "LocalExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown(wait=exc[0] is None)


# --------------------------------------------------------------------------- parsl

def call(fn: Callable, *args: Any) -> Any:
    """What the Parsl app runs on a worker: just the call (a top-level function so Parsl
    can serialise the app by reference)."""
    return fn(*args)


def parsl_config(workers: int, run_dir: Path, site: Optional[dict] = None):
    """The Parsl ``Config`` for ``site`` (see :data:`SITE_KEYS`); pure, nothing started."""
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.launchers import SingleNodeLauncher, SrunLauncher
    from parsl.providers import LocalProvider, SlurmProvider

    site = check_site(dict(site or {}))
    run_dir = Path(run_dir).resolve()
    python_dir = site.get("python_path") or os.path.dirname(sys.executable)
    # workers must find this package's python and Parsl's process_worker_pool.py
    worker_init = f"export PATH={python_dir}:$PATH"
    if site.get("worker_init"):
        worker_init = site["worker_init"].strip() + "\n" + worker_init
    provider_kind = site.get("provider", "local")
    if provider_kind == "slurm":
        launcher = SrunLauncher() if site.get("launcher", "srun") == "srun" else SingleNodeLauncher()
        kwargs = {k: site[k] for k in ("partition", "account", "qos", "constraint", "walltime", "nodes_per_block",
                                       "init_blocks", "min_blocks", "max_blocks", "cores_per_node", "mem_per_node",
                                       "gpus_per_node", "exclusive", "scheduler_options") if k in site}
        provider = SlurmProvider(launcher=launcher, worker_init=worker_init, **kwargs)
    else:
        provider = LocalProvider(init_blocks=1, min_blocks=0, max_blocks=1, nodes_per_block=1,
                                 worker_init=worker_init, launcher=SingleNodeLauncher())
    address = site.get("address")
    if address is None and site.get("interface"):
        from parsl.addresses import address_by_interface
        address = address_by_interface(site["interface"])
    if address is None and provider_kind == "local":
        address = "127.0.0.1"
    here_bin = os.path.dirname(sys.executable)  # the interchange runs on this machine
    htex = HighThroughputExecutor(
        label=site.get("label", "port_fortran_htex"),
        provider=provider,
        interchange_launch_cmd=[sys.executable, os.path.join(here_bin, "interchange.py")],
        address=address,
        cores_per_worker=site.get("cores_per_worker", 1),
        mem_per_worker=site.get("mem_per_worker"),
        max_workers_per_node=site.get("workers_per_node", max(1, int(workers))),
        worker_logdir_root=str(run_dir / "workers"),
        heartbeat_period=10,
        heartbeat_threshold=60,
        poll_period=10,
    )
    return Config(executors=[htex], run_dir=str(run_dir), usage_tracking=0, strategy="simple",
                  max_idletime=60.0, exit_mode="cleanup")


class ParslExecutor:
    """Parsl with one HighThroughputExecutor; ``submit`` runs ``fn(*args)`` as a Parsl
    ``python_app`` and returns its ``AppFuture`` (a ``concurrent.futures.Future``)."""

    kind = "parsl"

    def __init__(self, workers: int, run_dir: Path, site: Optional[dict] = None):
        import parsl
        from parsl.errors import ConfigurationError

        self.workers = max(1, int(workers))
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        config = parsl_config(self.workers, self.run_dir, site)
        try:
            self.dfk = parsl.load(config)
        except ConfigurationError as exc:
            raise UserError(f"parsl: {exc} (one Parsl executor per process; shut the other one down first)")
        self._app = parsl.python_app(call, executors=[config.executors[0].label], data_flow_kernel=self.dfk)
        self._closed = False

    def submit(self, fn: Callable, *args: Any) -> cf.Future:
        return self._app(fn, *args)

    def shutdown(self, wait: bool = True) -> None:
        import parsl

        if self._closed:
            return
        self._closed = True
        try:
            if wait:
                self.dfk.wait_for_current_tasks()
        finally:
            self.dfk.cleanup()
            parsl.clear()

    def __enter__(self) -> "ParslExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown(wait=exc[0] is None)


def make_executor(kind: str = "local", workers: Optional[int] = None, *, run_dir: str | Path = "parsl-runinfo",
                  **site: Any):
    """A local process pool or a Parsl executor. ``site`` holds the Parsl settings
    (:data:`SITE_KEYS`); ``run_dir`` is where Parsl keeps its logs (put it under the output
    directory). ``workers`` defaults to the CPU count (local) or 1 per core (parsl)."""
    workers = workers or (os.cpu_count() or 1)
    if workers < 1:
        raise UserError(f"workers: must be at least 1, got {workers}")
    if kind == "local":
        if site:
            raise UserError(f"site settings ({', '.join(sorted(site))}) apply to the parsl executor only; "
                            f"use executor: parsl")
        return LocalExecutor(workers)
    if kind == "parsl":
        try:
            import parsl  # noqa: F401
        except ImportError:
            raise UserError("executor parsl: Parsl is not installed; pip install 'port-fortran[cluster]'")
        return ParslExecutor(workers, Path(run_dir), site)
    raise UserError(f"executor: expected one of {', '.join(KINDS)}, got {kind!r}")


# --------------------------------------------------------------------------- fan-out

@dataclass
class Failure:
    """A call that raised (or whose worker died): what :func:`run_all` reports for it."""

    error_type: str
    message: str

    def __str__(self) -> str:
        return f"{self.error_type}: {self.message}"


def _lost_worker(exc: BaseException) -> bool:
    return isinstance(exc, BrokenProcessPool) or type(exc).__name__ in (
        "ManagerLost", "WorkerLost", "BadStateException")


def run_all(executor, fn: Callable, items: Iterable[Any],
            on_done: Optional[Callable[[Any, Any, Optional[Failure]], None]] = None,
            retries_on_lost_worker: int = 1) -> list[tuple[Any, Any, Optional[Failure]]]:
    """Run ``fn(item)`` for every item through ``executor``; returns
    ``[(item, result, failure)]`` in completion order, ``failure`` set (and ``result`` None)
    when the call raised. ``on_done`` is called as each finishes (in this thread).

    A call whose worker died (a crash takes down every call sharing the local pool) is
    tried again ``retries_on_lost_worker`` times; with the local executor each retry runs
    in a process of its own, so only the call that crashes fails."""
    items = list(items)
    pending: dict[cf.Future, tuple[Any, int]] = {}
    retry_queue: list[tuple[Any, int]] = []
    isolated = getattr(executor, "submit_isolated", None)
    limit = max(1, int(getattr(executor, "workers", 1) or 1))

    def submit(item: Any, tries: int) -> None:
        try:
            if tries and isolated is not None:
                fut = isolated(fn, item)
            else:
                fut = executor.submit(fn, item)
        except Exception as exc:  # the executor refused it (e.g. unpicklable): this item fails alone
            fut = cf.Future()
            fut.set_exception(exc)
        pending[fut] = (item, tries)

    def feed_retries() -> None:
        while retry_queue and (isolated is None or sum(1 for _, n in pending.values() if n) < limit):
            submit(*retry_queue.pop(0))

    for it in items:
        submit(it, 0)
    results: list[tuple[Any, Any, Optional[Failure]]] = []
    while pending or retry_queue:
        feed_retries()
        done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
        for fut in done:
            item, tries = pending.pop(fut)
            exc = fut.exception()
            if exc is not None and _lost_worker(exc) and tries < retries_on_lost_worker:
                retry_queue.append((item, tries + 1))
                continue
            if exc is None:
                res, fail = fut.result(), None
            else:
                res, fail = None, Failure(type(exc).__name__, " ".join(str(exc).split())[:2000] or repr(exc))
            results.append((item, res, fail))
            if on_done is not None:
                on_done(item, res, fail)
    return results
