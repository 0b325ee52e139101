"""The ``sightline`` command: ``serve``, ``create-owner``, ``migrate``, ``rebuild-store``,
``backup``, ``restore``, ``erase-visitor``, ``export-visitor``, ``compact``.

Flags come from the settings registry, so each has a ``SIGHTLINE_*`` environment variable too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from sightline.settings import Settings

# The module imports the rest where it is used: the server's store and recordings decoder processes
# (multiprocessing's spawn) run the module that started the server again, this one, before their own
# work, and need none of it (the settings and logging modules cost each about 30 ms of CPU).


def _parser() -> argparse.ArgumentParser:
    import argparse

    from sightline import __version__
    from sightline.settings import (
        BACKUP,
        COMPACT,
        ERASE,
        EXPORT,
        MCP,
        MIGRATE,
        OWNER,
        REBUILD,
        REGISTRY,
        RESTORE,
        SERVE,
    )

    parser = argparse.ArgumentParser(
        prog="sightline", description="Self-hosted, privacy-first web analytics."
    )
    parser.add_argument("--version", action="version", version=f"sightline {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    helps = {
        SERVE: "Run the HTTP server (console, SDK and ingest).",
        OWNER: "Create an owner account (password from SIGHTLINE_OWNER_PASSWORD or a prompt).",
        MIGRATE: "Bring the database schema up to date and exit.",
        REBUILD: "Rebuild the analytics store from the durable event log, then exit (server stopped).",
        BACKUP: "Copy the database and recordings into a new directory, with a manifest of checksums "
        "(the server may keep running).",
        RESTORE: "Restore a backup directory into an empty data directory or database (server stopped).",
        ERASE: "Erase everything stored about one visitor of a site (events, recordings, survey responses).",
        EXPORT: "Print everything stored about one visitor of a site as JSON (for an access request).",
        COMPACT: "Give the SQLite database's free pages back to the file system, and let the server do so "
        "by itself from then on (server stopped).",
        MCP: "Serve the stats API to an AI assistant over the Model Context Protocol on stdin/stdout, "
        "reading a running server with an API key (docs/assistants.md).",
    }
    for name, text in helps.items():
        sub = commands.add_parser(name, help=text, description=text)
        for setting in REGISTRY:
            if name in setting.commands:
                # A boolean flag given bare means true (``--allow-private-addresses``); it still
                # takes a value (``--allow-private-addresses false``), which the registry checks.
                boolean = setting.type_name == "boolean"
                sub.add_argument(
                    setting.flag,
                    dest=setting.name,
                    default=None,
                    nargs="?" if boolean else None,
                    const="true" if boolean else None,
                    metavar=setting.type_name.upper(),
                    # argparse formats help with %: a literal one (``0.3 %``) is written twice
                    help=f"{setting.help} [env {setting.env}; default {setting.default}]".replace("%", "%%"),
                )
        if name == OWNER:
            sub.add_argument("--email", required=True, help="The owner's e-mail address (sign-in name).")
        if name in (BACKUP, RESTORE):
            sub.add_argument("directory", metavar="DIR", help="The backup's directory.")
        if name in (ERASE, EXPORT):
            sub.add_argument(
                "--site", required=True, type=int, help="The site's id (as the console shows it)."
            )
            sub.add_argument("--visitor", required=True, help="The visitor code.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from sightline import logs
    from sightline.settings import (
        BACKUP,
        COMPACT,
        ERASE,
        EXPORT,
        MCP,
        OWNER,
        REBUILD,
        REGISTRY,
        RESTORE,
        SERVE,
        SettingsError,
        load,
    )

    args = _parser().parse_args(argv)
    overrides: dict[str, Any] = {s.name: getattr(args, s.name, None) for s in REGISTRY}
    try:
        settings = load(overrides)
    except SettingsError as exc:
        print(f"sightline: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_level, settings.log_format)
    if args.command == SERVE:
        return serve(settings)
    if args.command == OWNER:
        return create_owner(settings, args.email)
    if args.command == REBUILD:
        return rebuild_store(settings)
    if args.command in (BACKUP, RESTORE):
        return backup_or_restore(settings, args.command, args.directory)
    if args.command in (ERASE, EXPORT):
        return visitor_rights(settings, args.command, args.site, args.visitor)
    if args.command == COMPACT:
        return compact(settings)
    if args.command == MCP:
        from sightline.assistants import stdio

        return stdio.run(str(settings.api_url), settings.values.get("api_key"))
    return migrate(settings)


def _open(settings: Settings) -> Any:
    from sightline.database import open_database
    from sightline.database.engines import SchemaTooNewError

    try:
        return open_database(settings.effective_database_url)
    except SchemaTooNewError as exc:
        print(f"sightline: cannot start: {exc}", file=sys.stderr)
        return None
    except Exception as exc:
        print(f"sightline: cannot open the database: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None


def backup_or_restore(settings: Settings, command: str, directory: str) -> int:
    from pathlib import Path

    from sightline.backup.manifest import BackupError
    from sightline.backup.parts import Place
    from sightline.backup.service import backup, restore
    from sightline.settings import BACKUP

    place = Place.of(settings)
    presence = None
    if command != BACKUP and not place.database_url.startswith("sqlite"):
        # A backup runs beside live servers; a restore into a shared database must not.
        from sightline.database.engines import Database
        from sightline.database.presence import Presence, name_of

        presence = Presence(Database(place.database_url), name_of("restore"))
        nodes = presence.alone()
        if nodes:
            presence.db.dispose()
            why = "A restore replaces the database they are using."
            return _refuse_beside(nodes, "restore", why)
    try:
        if command == BACKUP:
            manifest = backup(place, Path(directory).resolve())
        else:
            manifest = restore(place, Path(directory).resolve())
    except BackupError as exc:
        print(f"sightline: {command} refused: {exc}", file=sys.stderr)
        return 1
    finally:
        if presence is not None:
            presence.release()
            presence.db.dispose()
    files = sum(len(p["files"]) for p in manifest.data["parts"])
    done = "backed up" if command == BACKUP else "restored"
    print(
        f"{done} {files} files ({', '.join(p['name'] for p in manifest.data['parts'])}) of a "
        f"{manifest.data['engine']} service at schema {', '.join(manifest.data['schema'])}"
    )
    return 0


def migrate(settings: Settings) -> int:
    db = _open(settings)
    if db is None:
        return 1
    print(f"database schema is at revision {db.current_revision()}")
    db.dispose()
    return 0


def _refuse_beside(nodes: Sequence[Any], command: str, why: str) -> int:
    """Says which nodes are live and what to do; the exit status of a refused command."""
    listed = "".join(f"\n  {node}" for node in nodes)
    print(
        f"sightline: {command} refused: {len(nodes)} other Sightline process(es) are live on this "
        f"database:{listed}\n{why} Stop them (every node of this database), then run {command} again.",
        file=sys.stderr,
    )
    return 1


def rebuild_store(settings: Settings) -> int:
    """Empties the analytics store and feeds it again from the whole durable log, with no server
    live on the same database (its store would be emptied under it)."""
    from sightline.database.presence import Presence, name_of
    from sightline.datadir import DataDirError, claim

    db = _open(settings)
    if db is None:
        return 1
    presence = Presence(db, name_of("rebuild-store"))
    try:
        nodes = presence.alone()
        if nodes:
            why = "They read and feed the analytics store that rebuild-store empties."
            return _refuse_beside(nodes, "rebuild-store", why)
        try:
            lock = claim(settings.data_path) if settings.events_url else None  # this node's server
        except DataDirError as exc:
            print(f"sightline: rebuild-store refused: {exc}", file=sys.stderr)
            return 1
        try:
            return _rebuild(settings, db)
        finally:
            if lock is not None:
                lock.release()
    finally:
        presence.release()
        db.dispose()


def _rebuild(settings: Settings, db: Any) -> int:
    import time

    from sightline.store.engines import StoreBusyError, open_engine
    from sightline.store.feed import Feeder

    try:
        engine = open_engine(settings.events_url, settings.data_path, int(settings.store_memory_mb))
    except StoreBusyError:
        print(
            "sightline: the analytics store is in use by a running server; stop the server first "
            "(or delete DATA_DIR/store.duckdb while it is stopped: the next start rebuilds it)",
            file=sys.stderr,
        )
        return 1
    try:
        engine.reset()
        feeder = Feeder(db, engine)
        started, fed = time.monotonic(), 0
        try:
            while step := feeder.step():
                fed += step
                print(f"fed {fed} events ({fed / max(time.monotonic() - started, 1e-6):.0f}/s)", flush=True)
        finally:
            feeder.close()
    finally:
        engine.close()
    print(f"the analytics store holds the log's {fed} events")
    return 0


def visitor_rights(settings: Settings, command: str, site_id: int, visitor_id: str) -> int:
    """``erase-visitor`` / ``export-visitor``: the console's erase and export, from a shell."""
    import orjson
    from sqlalchemy import select

    from sightline.database.schema import sites
    from sightline.errors import ApiError
    from sightline.recordings.feature import build
    from sightline.settings import EXPORT
    from sightline.visitors import rights

    db = _open(settings)
    if db is None:
        return 1
    try:
        rights.check_visitor_id(visitor_id)
        with db.read() as conn:
            if conn.execute(select(sites.c.id).where(sites.c.id == site_id)).first() is None:
                print(f"sightline: no site has the id {site_id}", file=sys.stderr)
                return 1
        if command == EXPORT:
            sys.stdout.write(
                orjson.dumps(rights.export(db, site_id, visitor_id), option=orjson.OPT_INDENT_2).decode()
            )
            sys.stdout.write("\n")
            return 0
        erasure = rights.erase(db, build(settings, db), site_id, visitor_id, None)
        print(
            f"erasure {erasure['id']}: removed {erasure['events_removed']} events, "
            f"{erasure['recordings_removed']} recordings, {erasure['responses_removed']} survey responses; "
            f"the analytics store's copy is {erasure['store']}"
        )
        return 0
    except ApiError as exc:
        print(f"sightline: {exc.message}", file=sys.stderr)
        return 2
    finally:
        db.dispose()


def compact(settings: Settings) -> int:
    """VACUUM the SQLite database while holding the data directory, as ``serve`` would."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    from sightline.database import open_database
    from sightline.database.compact import CompactError, compact
    from sightline.datadir import DataDirError, claim

    url = make_url(settings.effective_database_url)
    if url.get_backend_name() != "sqlite":
        print(
            "sightline: compact is for SQLite. PostgreSQL's autovacuum reuses deleted rows' space; "
            "to give it back to the file system run VACUUM FULL events with the servers stopped "
            "(it locks the table), or pg_repack while they run (docs/operations.md)",
            file=sys.stderr,
        )
        return 1
    try:
        lock = claim(settings.data_path)
    except DataDirError as exc:
        print(f"sightline: compact refused: {exc}", file=sys.stderr)
        return 1
    try:
        db = open_database(settings.effective_database_url, migrate=False)
        try:
            done = compact(db, Path(str(url.database)).resolve())
        finally:
            db.dispose()
    except CompactError as exc:
        print(f"sightline: compact refused: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # the file is not a database, a disk error: said, not a traceback
        print(
            f"sightline: compact failed, the database is as it was: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return 1
    finally:
        lock.release()
    print(done.summary())
    return 0


def create_owner(settings: Settings, email: str) -> int:
    import getpass

    from sightline.accounts.users import create_user
    from sightline.errors import ApiError

    password = os.environ.get("SIGHTLINE_OWNER_PASSWORD")
    if not password:
        if not sys.stdin.isatty():
            print("sightline: set SIGHTLINE_OWNER_PASSWORD or run in a terminal", file=sys.stderr)
            return 2
        password = getpass.getpass("Password for the new owner: ")
        if password != getpass.getpass("Repeat the password: "):
            print("sightline: the passwords differ", file=sys.stderr)
            return 2
    db = _open(settings)
    if db is None:
        return 1
    try:
        with db.begin() as conn:
            user = create_user(conn, email, password)
    except ApiError as exc:
        print(f"sightline: {exc.message}", file=sys.stderr)
        return 1
    finally:
        db.dispose()
    print(f"created owner {user['email']} (id {user['id']})")
    return 0


def serve(settings: Settings) -> int:
    import contextlib
    from datetime import timedelta

    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from sightline import __version__, serving
    from sightline.accounts.setup import issue_setup_token
    from sightline.app import create_app
    from sightline.datadir import DataDirError, claim

    try:
        lock = claim(settings.data_path)
    except DataDirError as exc:
        print(f"sightline: {exc}", file=sys.stderr)
        return 1
    db = _open(settings)
    if db is None:
        lock.release()
        return 1
    from sightline.database.presence import Presence, name_of

    presence = Presence(db, name_of(f"serve {settings.host}:{settings.port}"))
    if not presence.join():  # an operator's command holds the database: nodes stay out
        print(
            "sightline: an operator's command (rebuild-store or restore) is running on this "
            f"database: {', '.join(str(n) for n in presence.nodes()) or 'it just ended'}; "
            "start the server again once it is done",
            file=sys.stderr,
        )
        db.dispose()
        lock.release()
        return 1
    with db.begin() as conn:
        token = issue_setup_token(conn, timedelta(minutes=settings.setup_token_minutes))
    if token:
        print(
            "No owner account exists yet. Open this one-time link to create it "
            f"(valid {settings.setup_token_minutes} minutes):\n\n"
            f"    {settings.console_origin}/setup?token={token}\n",
            flush=True,
        )
    app = create_app(settings, db)
    print(
        f"Sightline {__version__} listening on http://{settings.host}:{settings.port} "
        f"(console at {settings.console_origin})",
        flush=True,
    )
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        proxy_headers=False,  # sightline.clientaddr reads them, from --trusted-proxies only
        server_header=False,
        log_config=None,  # Sightline's own handler (logs.configure): text or JSON, request ids
        access_log=False,  # uvicorn's has client addresses; sightline.access logs requests at debug
        **serving.options(settings),  # header and body timeouts, the connection cap
    )
    server = serving.Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run
        server.run()
    presence.release()
    db.dispose()
    lock.release()
    return 0 if server.started else STARTUP_FAILURE


if __name__ == "__main__":
    raise SystemExit(main())
