"""A real, throwaway PostgreSQL server on a temp dir and a loopback port, for the test session.

Debian's server binaries live under /usr/lib/postgresql/N/bin. PostgreSQL refuses to run as root,
so when the tests run as root the cluster belongs to the ``postgres`` system user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tests.support import waits
from tests.support.ports import free_port


def find_bindir() -> Path | None:
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "postgres").exists():
            return Path(candidate)
    found = shutil.which("postgres")
    return Path(found).resolve().parent if found else None


class PostgresServer:
    def __init__(self) -> None:
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed; `make test` installs Debian's postgresql")
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="sightline-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        self.process: subprocess.Popen[bytes] | None = None
        self.template: str | None = None  # a database at the newest schema (create_migrated_database)

    def _run_as_owner(self, args: list[str]) -> subprocess.CompletedProcess[bytes]:
        command = ["runuser", "-u", "postgres", "--", *args] if self.as_root else args
        return subprocess.run(command, check=True, capture_output=True)

    def start(self) -> None:
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self._run_as_owner(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ]
        )
        self.launch()

    def launch(self) -> None:
        """Run the server on the existing cluster (``start`` creates it first)."""
        command = [
            str(self.bindir / "postgres"),
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-h",
            "127.0.0.1",
            "-k",
            str(self.root),
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=200",
        ]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        with open(self.root / "postgres.log", "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + waits.START
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError((self.root / "postgres.log").read_text())
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
                ready = subprocess.run(
                    [str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                    capture_output=True,
                    check=False,
                )
                if ready.returncode == 0:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL did not start within {waits.START:.0f} s")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, template: str | None = None) -> str:
        """A new, empty database (or a copy of ``template``)."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        copy = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"{copy}')
        return self.url(name)

    def create_migrated_database(self) -> str:
        """A new database at the newest schema: a copy of one migrated at first use.

        Every server migrates its database when it starts; one at the newest schema already costs
        it a check instead of every migration (0.15 s of the server's CPU and 0.1 s of PostgreSQL's
        per database). Copying a database is PostgreSQL's own ``CREATE DATABASE ... TEMPLATE``.
        """
        if self.template is None:
            from sightline.database import open_database

            url = self.create_database()
            open_database(url).dispose()  # no connection left: a template must have none
            self.template = url.rsplit("/", 1)[1]
        return self.create_database(self.template)

    def halt(self) -> None:
        """Stop the server, keeping its data (``launch`` runs it again), as an operator would."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=waits.STOP)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)

    def stop(self) -> None:
        self.halt()
        shutil.rmtree(self.root, ignore_errors=True)
