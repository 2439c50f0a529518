"""Graph checkpoints: ``<out>/checkpoints.sqlite`` (LangGraph's SqliteSaver), one thread
per kernel of a run (``<run_id>:<kernel_id>``), written after every node, so a kernel
interrupted mid-graph resumes from its last finished stage.

Several worker processes share the file: WAL mode (set by SqliteSaver.setup) and a long
busy timeout let them take turns.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Optional

CHECKPOINT_DB = "checkpoints.sqlite"


def thread_id(run_id: str, kernel_id: str) -> str:
    return f"{run_id}:{kernel_id}"


def open_checkpointer(out_dir: str | Path):
    """(SqliteSaver, its connection); close the connection when done."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(Path(out_dir) / CHECKPOINT_DB), check_same_thread=False, timeout=120)
    conn.execute("PRAGMA busy_timeout=120000")
    saver = SqliteSaver(conn)
    for i in range(20):
        try:
            saver.setup()
            break
        except sqlite3.OperationalError:  # another worker is creating the tables
            time.sleep(0.2 * (i + 1))
    return saver, conn


def last_state(out_dir: str | Path, run_id: str, kernel_id: str) -> Optional[dict[str, Any]]:
    """The last checkpointed values of a kernel's graph state (None if it never started)."""
    path = Path(out_dir) / CHECKPOINT_DB
    if not path.is_file():
        return None
    saver, conn = open_checkpointer(out_dir)
    try:
        tup = saver.get_tuple({"configurable": {"thread_id": thread_id(run_id, kernel_id), "checkpoint_ns": ""}})
        if tup is None:
            return None
        return {k: v for k, v in (tup.checkpoint.get("channel_values") or {}).items() if not k.startswith("branch:")}
    finally:
        conn.close()
