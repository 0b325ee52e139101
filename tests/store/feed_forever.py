"""Feeds a store from a log until killed (the SIGKILL test runs this as a process of its own).

``python -m tests.store.feed_forever DATABASE_URL EVENTS_URL DATA_DIR [--until-caught-up]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from sightline.database import open_database
from sightline.store.engines import open_engine
from sightline.store.feed import Feeder


def main(argv: list[str]) -> int:
    database_url, events_url, data_dir = argv[:3]
    once = "--until-caught-up" in argv[3:]
    db = open_database(database_url, migrate=False)
    engine = open_engine(events_url or None, Path(data_dir), 256)
    feeder = Feeder(db, engine, batch=400, backlog=700)
    print("feeding", flush=True)
    while True:
        if not feeder.step():
            if once:
                engine.close()
                return 0
            time.sleep(0.05)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
