"""``port-fortran report DIR [--run RUN_ID]``: re-render the reports from a run database."""
from __future__ import annotations

from pathlib import Path

from ..errors import UserError
from .db import DB_NAME, RunDB
from .render import render_reports


def open_db(out_dir: str | Path) -> RunDB:
    """The run database of an output directory; a clear error when there is none (without
    creating one)."""
    d = Path(out_dir)
    if not d.is_dir():
        raise UserError(f"{d}: no such directory; give the --out directory of an earlier run")
    if not (d / DB_NAME).is_file():
        raise UserError(f"{d}: no run database ({DB_NAME}) here; give the --out directory of an earlier "
                        f"port-fortran run")
    return RunDB.in_dir(d)


def cmd_report(args) -> int:
    db = open_db(args.out_dir)
    try:
        run_id = args.run or db.latest_run()
        if not run_id:
            raise UserError(f"{db.path}: the database holds no runs yet")
        paths = render_reports(db, run_id, Path(args.out_dir))
    finally:
        db.close()
    print(f"run {run_id}:")
    for kind in ("html", "md", "json"):
        print(f"  {paths[kind]}")
    return 0
