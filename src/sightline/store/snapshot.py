"""A consistent copy of the embedded store for ``sightline backup``, and putting one back.

With ``--event-log-retention-days`` the store is the only copy of events the log has trimmed, so
a backup must hold the store too. The DuckDB file belongs to the store process while a server
runs (one process may open it), so the copy is asked of that process: it publishes where it
listens in ``DATA_DIR/store.control`` (owner-only; an address and a key), and writes each table
as a Parquet file inside one read transaction (one snapshot of the feed: events, visits and the
watermark agree). With no server running, the file is opened read-only here instead.

Restore creates the tables and loads the Parquet files into a new ``store.duckdb`` (a copy of the
layout before, with the columns it lacks filled in as ``store.upgrade`` fills them); events the
backup's log holds beyond the store's watermark are fed when the server starts.

Imports: ``store.engines``, ``store.schema``, ``store.upgrade``, the standard library and DuckDB.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from multiprocessing.connection import Client
from pathlib import Path
from typing import Any

import duckdb

from sightline.store import schema, upgrade
from sightline.store.engines import FILE_NAME, TABLES, copy_tables, path_literal

CONTROL = "store.control"


class SnapshotError(RuntimeError):
    """The store could not be copied or put back; the message says why and what to do."""


# -- the store process's side ------------------------------------------------------------------


def publish(data_dir: Path, address: str, authkey: bytes) -> Path:
    """Says where the running store process listens (owner-only file, replaced atomically)."""
    path = data_dir / CONTROL
    temporary = path.with_name(f".{CONTROL}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump({"address": address, "authkey": authkey.hex(), "pid": os.getpid()}, handle)
    temporary.replace(path)
    return path


def withdraw(data_dir: Path) -> None:
    """The process stops listening: the control file goes (only if it is still this process's)."""
    path = data_dir / CONTROL
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()


# -- the backup's side -------------------------------------------------------------------------


def export(data_dir: Path, target: Path) -> list[Path]:
    """Copies the embedded store of ``data_dir`` into ``target``; [] when there is none yet."""
    asked = _ask_running(data_dir, target)
    if asked is not None:
        return asked
    path = data_dir / FILE_NAME
    if not path.exists():
        return []
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.IOException as error:
        if "lock" in str(error).lower():
            raise SnapshotError(
                f"{path} is held by a process that does not answer (no server's store process "
                f"listens at {data_dir / CONTROL}); stop it and run the backup again"
            ) from error
        raise SnapshotError(f"{path} cannot be read ({error}); run `sightline rebuild-store`") from error
    try:
        return copy_tables(con, target)
    finally:
        con.close()


def _ask_running(data_dir: Path, target: Path) -> list[Path] | None:
    """The running store process's copy, or None when no process listens."""
    control = _control(data_dir)
    if control is None:
        return None
    try:
        connection = Client(control["address"], family="AF_UNIX", authkey=bytes.fromhex(control["authkey"]))
    except (OSError, EOFError, ValueError):
        return None  # a file left by a process that was killed
    with connection:
        connection.send(("export", str(target.resolve())))
        kind, value = connection.recv()
    if kind != "ok":
        raise SnapshotError(f"the store process could not copy the store: {value}")
    return [Path(p) for p in value]


def _control(data_dir: Path) -> dict[str, Any] | None:
    try:
        found = json.loads((data_dir / CONTROL).read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and {"address", "authkey"} <= found.keys() else None


# -- restore -----------------------------------------------------------------------------------


def occupied(data_dir: Path) -> str | None:
    path = data_dir / FILE_NAME
    return f"{path} already exists" if path.exists() else None


def _files(source: Path) -> dict[str, Path] | None:
    """The copy's file per table; None when the service had no store yet (the log builds it).
    A copy made in another layout may lack a table: ``check`` refuses it by its ``store_meta``."""
    files = {table: source / f"{table}.parquet" for table in TABLES}
    return files if files["store_meta"].exists() else None


def check(source: Path) -> None:
    """Refuses a copy this Sightline cannot load (another store layout, an unreadable file)."""
    files = _files(source)
    if files is None:
        return
    meta = files["store_meta"]
    try:
        made = _format_of(meta)
    except duckdb.Error as error:
        raise SnapshotError(f"{meta}: not a store copy this Sightline can read ({error})") from error
    if made != schema.FORMAT and made not in upgrade.UPGRADABLE:
        raise SnapshotError(
            f"{meta}: the store was copied in layout {made}, this Sightline uses {schema.FORMAT}; "
            "restore with the version that made the backup, then upgrade"
        )


def restore(data_dir: Path, source: Path) -> None:
    """Loads a copy made by ``export`` (and passed by ``check``) into a new
    ``DATA_DIR/store.duckdb``, renamed into place once whole."""
    files = _files(source)
    if files is None:
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    final = data_dir / FILE_NAME
    building = data_dir / f".{FILE_NAME}.restoring"
    building.unlink(missing_ok=True)
    made = _format_of(files["store_meta"])
    con = duckdb.connect(str(building))
    try:
        for statement in schema.DUCKDB:
            con.execute(statement)
        for table, path in files.items():
            columns = upgrade.restored_columns(made, table)  # an older layout's, brought up to date
            source_rows = f"SELECT {columns} FROM read_parquet('{path_literal(path)}')"  # noqa: S608
            con.execute(f"INSERT INTO {table} BY NAME {source_rows}")
        con.execute("UPDATE store_meta SET engine = ?, format = ?", [duckdb.__version__, schema.FORMAT])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    building.replace(final)


def _format_of(meta: Path) -> int | None:
    with _memory() as con:
        query = f"SELECT format FROM read_parquet('{path_literal(meta)}') LIMIT 1"  # noqa: S608
        row = con.execute(query).fetchone()
    return None if row is None else int(row[0])


@contextlib.contextmanager
def _memory() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    try:
        yield con
    finally:
        con.close()
