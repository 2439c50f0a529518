"""The run database (SQLite): runs, kernels, attempts per stage, verdicts, timings, LLM calls.

The pipeline writes it; reports read only from it. One file per output directory
(``<out>/port-fortran.db``). Safe to open from several processes (WAL, busy timeout).
Extend the schema by adding columns with defaults (``_migrate``), never by renaming.
"""
from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any, Iterable, Optional

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    started     REAL NOT NULL,
    finished    REAL,
    status      TEXT NOT NULL DEFAULT 'running',   -- running | finished | interrupted
    command     TEXT NOT NULL DEFAULT '',
    config      TEXT NOT NULL DEFAULT '{}',        -- JSON of the effective configuration
    host        TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS kernels (
    run_id      TEXT NOT NULL,
    kernel_id   TEXT NOT NULL,                     -- '<file>:<kernel>' relative file path
    file        TEXT NOT NULL,
    name        TEXT NOT NULL,
    line_start  INTEGER,
    line_end    INTEGER,
    status      TEXT NOT NULL DEFAULT 'pending',   -- pending | running | verified | failed | refused | budget-reached | error
    reason      TEXT NOT NULL DEFAULT '',          -- one line: why not verified, with file:line
    reason_code TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',          -- the model whose port was kept
    patterns    TEXT NOT NULL DEFAULT '[]',        -- JSON list: parallel_for, mdrange, reduce, serial, atomic, versioned
    versions    TEXT NOT NULL DEFAULT '[]',        -- JSON list: loops parallel only under a run-time condition
    port_dir    TEXT NOT NULL DEFAULT '',
    mode        TEXT NOT NULL DEFAULT '',          -- full | hybrid ('' until translated)
    hybrid      TEXT NOT NULL DEFAULT '{}',        -- JSON: a hybrid port's nests, outlined kernels, what stays Fortran
    cmake       TEXT NOT NULL DEFAULT '',          -- which CMake built the port ('cmake 4.1.0 (<path>, from ...)')
    started     REAL,
    finished    REAL,
    PRIMARY KEY (run_id, kernel_id)
);
CREATE TABLE IF NOT EXISTS attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    kernel_id   TEXT NOT NULL,
    stage       TEXT NOT NULL,                     -- translate | validate | compile | run | debug | optimize | finalize
    model       TEXT NOT NULL DEFAULT '',
    backend     TEXT NOT NULL DEFAULT '',
    attempt     INTEGER NOT NULL DEFAULT 1,
    ok          INTEGER NOT NULL,
    detail      TEXT NOT NULL DEFAULT '',
    seconds     REAL NOT NULL DEFAULT 0,
    at          REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    kernel_id   TEXT NOT NULL,
    backend     TEXT NOT NULL,
    passed      INTEGER NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    data        TEXT NOT NULL DEFAULT '{}',        -- JSON of records.Verdict
    at          REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS timings (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    kernel_id   TEXT NOT NULL,
    variant     TEXT NOT NULL,                     -- fortran-serial | fortran-openmp | kokkos-<backend>
    threads     INTEGER NOT NULL DEFAULT 1,
    median_s    REAL NOT NULL,
    spread_s    REAL NOT NULL DEFAULT 0,
    repeats     INTEGER NOT NULL DEFAULT 0,
    kernel_only INTEGER NOT NULL DEFAULT 1,
    gbytes_per_s REAL,
    gflops      REAL,
    roofline_fraction REAL,
    sizes       TEXT NOT NULL DEFAULT '{}',
    at          REAL NOT NULL,
    proven_sizes TEXT                              -- JSON: sizes the timed build was verified at on that backend; NULL: the reference or unproven
);
CREATE TABLE IF NOT EXISTS llm_calls (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    kernel_id   TEXT NOT NULL DEFAULT '',
    stage       TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL,
    provider    TEXT NOT NULL DEFAULT '',
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL NOT NULL DEFAULT 0,
    price_source TEXT NOT NULL DEFAULT '',         -- genai-prices | override | unknown
    seconds     REAL NOT NULL DEFAULT 0,
    ok          INTEGER NOT NULL DEFAULT 1,
    error       TEXT NOT NULL DEFAULT '',
    at          REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS program (
    run_id      TEXT PRIMARY KEY,
    data        TEXT NOT NULL DEFAULT '{}'         -- JSON: the program model's summary (files, externals, call graph)
);
CREATE TABLE IF NOT EXISTS python_modules (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL,
    module      TEXT NOT NULL,                     -- the import name
    backend     TEXT NOT NULL,
    ok          INTEGER NOT NULL,
    path        TEXT NOT NULL DEFAULT '',          -- the built extension module
    kernels     TEXT NOT NULL DEFAULT '[]',        -- JSON list of the kernel_ids it holds
    cmake       TEXT NOT NULL DEFAULT '',          -- which CMake built it
    message     TEXT NOT NULL DEFAULT '',          -- why it failed
    seconds     REAL NOT NULL DEFAULT 0,
    at          REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS kernel_sources (
    run_id      TEXT NOT NULL,
    kernel_id   TEXT NOT NULL,
    fortran_file TEXT NOT NULL DEFAULT '',         -- the original file (as given)
    fortran_first_line INTEGER NOT NULL DEFAULT 1,
    fortran     TEXT NOT NULL DEFAULT '',          -- the routine's lines of the original
    kokkos_file TEXT NOT NULL DEFAULT '',          -- '<k>.kokkos.cpp'
    kokkos      TEXT NOT NULL DEFAULT '',          -- the port kept ('' when none)
    PRIMARY KEY (run_id, kernel_id)
);
CREATE TABLE IF NOT EXISTS application (
    run_id      TEXT PRIMARY KEY,
    data        TEXT NOT NULL DEFAULT '{}'         -- JSON: `port-fortran app` (build, ports in place, backends, proof)
);
CREATE INDEX IF NOT EXISTS attempts_k ON attempts(run_id, kernel_id);
CREATE INDEX IF NOT EXISTS llm_k ON llm_calls(run_id, kernel_id);
"""

DB_NAME = "port-fortran.db"


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


class RunDB:
    """Thin access layer; every method is one transaction."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA busy_timeout=60000")
        self.conn.executescript(SCHEMA)
        self._migrate()

    # columns added after a table was first released: (table, column, declaration)
    ADDED_COLUMNS = (("kernels", "versions", "TEXT NOT NULL DEFAULT '[]'"),
                     ("kernels", "cmake", "TEXT NOT NULL DEFAULT ''"),
                     ("kernels", "mode", "TEXT NOT NULL DEFAULT ''"),
                     ("kernels", "hybrid", "TEXT NOT NULL DEFAULT '{}'"),
                     ("timings", "proven_sizes", "TEXT"))

    def _migrate(self) -> None:
        """Add the columns a database written by an older version lacks."""
        for table, col, decl in self.ADDED_COLUMNS:
            have = {r["name"] for r in self.conn.execute(f"PRAGMA table_info({table})")}
            if col not in have:
                try:
                    self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")
                except sqlite3.OperationalError as exc:  # another process added it meanwhile
                    if "duplicate column" not in str(exc):
                        raise

    @classmethod
    def in_dir(cls, out_dir: str | Path) -> "RunDB":
        return cls(Path(out_dir) / DB_NAME)

    def close(self) -> None:
        self.conn.close()

    def _exec(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, tuple(params))

    # ----------------------------------------------------------------- runs
    def start_run(self, run_id: Optional[str] = None, command: str = "", config: Optional[dict] = None,
                  host: str = "") -> str:
        run_id = run_id or new_run_id()
        self._exec("INSERT OR IGNORE INTO runs(run_id, started, command, config, host) VALUES (?,?,?,?,?)",
                   (run_id, time.time(), command, json.dumps(config or {}, default=str), host))
        self._exec("UPDATE runs SET status='running', finished=NULL WHERE run_id=?", (run_id,))
        return run_id

    def finish_run(self, run_id: str, status: str = "finished") -> None:
        self._exec("UPDATE runs SET status=?, finished=? WHERE run_id=?", (status, time.time(), run_id))

    def run(self, run_id: str) -> Optional[dict]:
        r = self._exec("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return dict(r) if r else None

    def latest_run(self) -> Optional[str]:
        r = self._exec("SELECT run_id FROM runs ORDER BY started DESC LIMIT 1").fetchone()
        return r["run_id"] if r else None

    # ----------------------------------------------------------------- kernels
    def upsert_kernel(self, run_id: str, kernel_id: str, file: str, name: str,
                      line_start: Optional[int] = None, line_end: Optional[int] = None) -> None:
        self._exec("INSERT OR IGNORE INTO kernels(run_id, kernel_id, file, name, line_start, line_end) "
                   "VALUES (?,?,?,?,?,?)", (run_id, kernel_id, file, name, line_start, line_end))

    def set_kernel(self, run_id: str, kernel_id: str, **fields: Any) -> None:
        for key in ("patterns", "versions"):
            if key in fields and not isinstance(fields[key], str):
                fields[key] = json.dumps(list(fields[key]))
        if "hybrid" in fields and not isinstance(fields["hybrid"], str):
            fields["hybrid"] = json.dumps(fields["hybrid"] or {})
        cols = ", ".join(f"{k}=?" for k in fields)
        self._exec(f"UPDATE kernels SET {cols} WHERE run_id=? AND kernel_id=?",
                   list(fields.values()) + [run_id, kernel_id])

    def kernels(self, run_id: str) -> list[dict]:
        return [dict(r) for r in self._exec("SELECT * FROM kernels WHERE run_id=? ORDER BY file, line_start",
                                            (run_id,))]

    def kernel(self, run_id: str, kernel_id: str) -> Optional[dict]:
        r = self._exec("SELECT * FROM kernels WHERE run_id=? AND kernel_id=?", (run_id, kernel_id)).fetchone()
        return dict(r) if r else None

    # ----------------------------------------------------------------- attempts, verdicts, timings
    def add_attempt(self, run_id: str, kernel_id: str, stage: str, ok: bool, detail: str = "",
                    model: str = "", backend: str = "", attempt: int = 1, seconds: float = 0.0) -> None:
        self._exec("INSERT INTO attempts(run_id, kernel_id, stage, model, backend, attempt, ok, detail, seconds, at) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (run_id, kernel_id, stage, model, backend, attempt, int(ok), detail, seconds, time.time()))

    def attempts(self, run_id: str, kernel_id: Optional[str] = None) -> list[dict]:
        if kernel_id is None:
            cur = self._exec("SELECT * FROM attempts WHERE run_id=? ORDER BY id", (run_id,))
        else:
            cur = self._exec("SELECT * FROM attempts WHERE run_id=? AND kernel_id=? ORDER BY id", (run_id, kernel_id))
        return [dict(r) for r in cur]

    def add_verdict(self, run_id: str, kernel_id: str, backend: str, passed: bool, reason: str = "",
                    data: Optional[dict] = None) -> None:
        self._exec("INSERT INTO verdicts(run_id, kernel_id, backend, passed, reason, data, at) VALUES (?,?,?,?,?,?,?)",
                   (run_id, kernel_id, backend, int(passed), reason, json.dumps(data or {}, default=str), time.time()))

    def verdicts(self, run_id: str, kernel_id: Optional[str] = None) -> list[dict]:
        q, p = "SELECT * FROM verdicts WHERE run_id=?", [run_id]
        if kernel_id is not None:
            q, p = q + " AND kernel_id=?", p + [kernel_id]
        return [dict(r) for r in self._exec(q + " ORDER BY id", p)]

    def add_timing(self, run_id: str, kernel_id: str, variant: str, median_s: float, *, threads: int = 1,
                   spread_s: float = 0.0, repeats: int = 0, kernel_only: bool = True,
                   gbytes_per_s: Optional[float] = None, gflops: Optional[float] = None,
                   roofline_fraction: Optional[float] = None, sizes: Optional[dict] = None,
                   proven_sizes: Optional[dict] = None) -> None:
        self._exec("INSERT INTO timings(run_id, kernel_id, variant, threads, median_s, spread_s, repeats, kernel_only, "
                   "gbytes_per_s, gflops, roofline_fraction, sizes, at, proven_sizes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (run_id, kernel_id, variant, threads, median_s, spread_s, repeats, int(kernel_only),
                    gbytes_per_s, gflops, roofline_fraction, json.dumps(sizes or {}), time.time(),
                    None if proven_sizes is None else json.dumps(proven_sizes)))

    def timings(self, run_id: str, kernel_id: Optional[str] = None) -> list[dict]:
        q, p = "SELECT * FROM timings WHERE run_id=?", [run_id]
        if kernel_id is not None:
            q, p = q + " AND kernel_id=?", p + [kernel_id]
        return [dict(r) for r in self._exec(q + " ORDER BY id", p)]

    # ----------------------------------------------------------------- the program model
    def set_program(self, run_id: str, data: dict) -> None:
        self._exec("INSERT OR REPLACE INTO program(run_id, data) VALUES (?,?)", (run_id, json.dumps(data, default=str)))

    def program(self, run_id: str) -> Optional[dict]:
        r = self._exec("SELECT data FROM program WHERE run_id=?", (run_id,)).fetchone()
        return json.loads(r["data"]) if r else None

    # ----------------------------------------------------------------- a whole application
    def set_application(self, run_id: str, data: dict) -> None:
        self._exec("INSERT OR REPLACE INTO application(run_id, data) VALUES (?,?)",
                   (run_id, json.dumps(data, default=str)))

    def application(self, run_id: str) -> Optional[dict]:
        r = self._exec("SELECT data FROM application WHERE run_id=?", (run_id,)).fetchone()
        return json.loads(r["data"]) if r else None

    # ----------------------------------------------------------------- Python modules, sources
    def add_python_module(self, run_id: str, module: str, backend: str, *, ok: bool, path: str = "",
                          kernels: Iterable[str] = (), cmake: str = "", message: str = "",
                          seconds: float = 0.0) -> None:
        self._exec("INSERT INTO python_modules(run_id, module, backend, ok, path, kernels, cmake, message, seconds, at) "
                   "VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (run_id, module, backend, int(ok), path, json.dumps(list(kernels)), cmake, message, seconds,
                    time.time()))

    def python_modules(self, run_id: str) -> list[dict]:
        return [dict(r) for r in self._exec("SELECT * FROM python_modules WHERE run_id=? ORDER BY id", (run_id,))]

    def set_sources(self, run_id: str, kernel_id: str, *, fortran_file: str = "", fortran_first_line: int = 1,
                    fortran: str = "", kokkos_file: str = "", kokkos: str = "") -> None:
        """The routine's original lines and the Kokkos port kept (for the side-by-side view)."""
        self._exec("INSERT OR REPLACE INTO kernel_sources(run_id, kernel_id, fortran_file, fortran_first_line, fortran, "
                   "kokkos_file, kokkos) VALUES (?,?,?,?,?,?,?)",
                   (run_id, kernel_id, fortran_file, fortran_first_line, fortran, kokkos_file, kokkos))

    def sources(self, run_id: str) -> dict[str, dict]:
        return {r["kernel_id"]: dict(r) for r in self._exec("SELECT * FROM kernel_sources WHERE run_id=?", (run_id,))}

    # ----------------------------------------------------------------- LLM calls
    def add_llm_call(self, run_id: str, model: str, *, kernel_id: str = "", stage: str = "", provider: str = "",
                     input_tokens: int = 0, cached_tokens: int = 0, output_tokens: int = 0,
                     cost_usd: float = 0.0, price_source: str = "", seconds: float = 0.0, ok: bool = True,
                     error: str = "") -> None:
        self._exec("INSERT INTO llm_calls(run_id, kernel_id, stage, model, provider, input_tokens, cached_tokens, "
                   "output_tokens, cost_usd, price_source, seconds, ok, error, at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (run_id, kernel_id, stage, model, provider, input_tokens, cached_tokens, output_tokens,
                    cost_usd, price_source, seconds, int(ok), error, time.time()))

    def llm_calls(self, run_id: str, kernel_id: Optional[str] = None) -> list[dict]:
        q, p = "SELECT * FROM llm_calls WHERE run_id=?", [run_id]
        if kernel_id is not None:
            q, p = q + " AND kernel_id=?", p + [kernel_id]
        return [dict(r) for r in self._exec(q + " ORDER BY id", p)]

    def total_cost(self, run_id: str) -> float:
        r = self._exec("SELECT COALESCE(SUM(cost_usd), 0) AS c FROM llm_calls WHERE run_id=?", (run_id,)).fetchone()
        return float(r["c"])
