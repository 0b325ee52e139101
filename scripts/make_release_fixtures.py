"""Write one SQLite database per earlier release to tests/database/releases/ (run after a release).

Each file has the schema the release's migrations made and two rows in every table
(``tests.database.release_data``); ``tests/database/test_upgrades.py`` migrates copies of them to the
current heads. Existing files are kept: a release's database never changes once written.
Run: ``.venv/bin/python scripts/make_release_fixtures.py``.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.database.release_data import RELEASES, make_release  # noqa: E402

FIXTURES = ROOT / "tests" / "database" / "releases"


def main() -> int:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, heads in RELEASES:
        target = FIXTURES / f"{name}.sqlite"
        if target.exists():
            continue
        make_release(f"sqlite:///{target}", heads)
        with sqlite3.connect(target) as conn:  # one file, no empty pages
            conn.execute("PRAGMA journal_mode=DELETE")
        conn.close()
        with sqlite3.connect(target, isolation_level=None) as conn:
            conn.execute("VACUUM")
        conn.close()
        for extra in (target.with_name(target.name + "-wal"), target.with_name(target.name + "-shm")):
            extra.unlink(missing_ok=True)
        print(f"wrote {target.relative_to(ROOT)} (heads {', '.join(heads)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
