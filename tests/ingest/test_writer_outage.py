"""The writer on a full disk: the condition is logged once (no tracebacks), every batch is answered
as failed (the server says 503 and the SDK sends it again), and storing resumes with one line that
counts what was refused, once there is room. A real SQLite file on a real, full tmpfs."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.support.namespaces import in_tmpfs

GROUPS = 40

SCRIPT = r"""
import logging, os, sys, time
import orjson
from sqlalchemy import text
from sightline.accounts.users import create_user
from sightline.ingest.protocol import FAILED, STORED, Submit
from sightline.ingest.writer_process import Writer
from sightline.sites.service import create_site
from sightline.database import open_database

root, groups = sys.argv[1], int(sys.argv[2])
records = []
class Keep(logging.Handler):
    def emit(self, record):
        message = record.getMessage()
        records.append({"level": record.levelname, "message": message, "traceback": bool(record.exc_info)})
logging.getLogger("sightline").addHandler(Keep())
logging.getLogger("sightline").setLevel(logging.INFO)

db = open_database(f"sqlite:///{root}/sightline.db")
with db.begin() as conn:
    user = create_user(conn, "owner@example.com", "correct horse battery staple")
    site = create_site(conn, user["id"], "Shop", "shop.example")
with db.engine.connect() as conn:
    conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
read, write = os.pipe()
writer = Writer(db, write)

def submit(n):
    event = {"name": "pageview", "ts": int(time.time() * 1000), "visitor_id": "v" * 20,
             "session_id": "s" * 20, "url": "https://shop.example/", "path": "/", "referrer": "", "props": {}}
    bid = f"batch-{n:04d}-" + "x" * 10
    body = orjson.dumps({"key": site["key"], "batch_id": bid, "events": [event] * 20})
    return Submit(n, site["id"], "shop.example", "Chrome", "Linux", "desktop", int(time.time() * 1e6), body)

with open(f"{root}/filler", "wb") as filler:
    try:
        while True:
            filler.write(b"\0" * 65536)
            filler.flush()
    except OSError:
        pass
before = len(records)
full = [writer._commit([(n, writer._rows(submit(n)))])[n] for n in range(groups)]
during = records[before:]
os.unlink(f"{root}/filler")
after = writer._commit([(groups, writer._rows(submit(groups)))])[groups]
with db.read() as conn:
    stored = conn.execute(text("SELECT count(*) FROM events")).scalar()
print(orjson.dumps({"full": full, "after": after, "failed": FAILED, "stored_code": STORED,
                    "during": during, "end": records[before + len(during):], "events": stored}).decode())
"""


def test_a_full_disk_is_logged_once_and_counted_and_storing_resumes_when_there_is_room(
    tmp_path: Path,
) -> None:
    out = in_tmpfs(tmp_path / "disk", "8m", SCRIPT, str(GROUPS))
    result = orjson.loads(out.strip().splitlines()[-1])
    assert result["full"] == [result["failed"]] * GROUPS
    assert [r for r in result["during"] if r["traceback"]] == []
    assert len(result["during"]) == 1, result["during"]
    assert "disk holding the database is full" in result["during"][0]["message"]
    assert "Free space" in result["during"][0]["message"]
    assert result["after"] == result["stored_code"]
    assert result["events"] == 20
    (resumed,) = result["end"]
    assert "storing again" in resumed["message"]
    assert f"{GROUPS} batches in {GROUPS} groups" in resumed["message"]
