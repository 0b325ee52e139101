"""The servers of the ingest benchmark: the product (``sightline serve`` on a fresh data
directory, the current code or a baseline's) and the machine's HTTP ceiling (``ceiling_app``).

The product's owner and site are made by a child Python of the same code the server runs, so a
baseline's database has that baseline's schema; the benchmark signs in over HTTP to read the
store's lag from ``/api/health`` and counts stored events with ``sqlite3``.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.proctree import Tree

ROOT = Path(__file__).resolve().parent.parent
EMAIL = "bench@example.com"
PASSWORD = "correct horse battery staple"
ORIGIN_HOST = "localhost:9999"  # the site's domain, and the Origin wrk sends
SETUP = """
import json, sys
from sightline.accounts.users import create_user
from sightline.sites.service import create_site
from sightline.database import open_database
db = open_database(sys.argv[1])
with db.begin() as conn:
    owner = create_user(conn, sys.argv[2], sys.argv[3])
    site = create_site(conn, owner["id"], "Bench", sys.argv[4])
db.dispose()
print(json.dumps({"key": site["key"], "id": int(site["id"])}))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited with {process.returncode}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not start")


class Server:
    """One server under wrk: its name (``ceiling``, ``ingest``, ``baseline``), port and process tree."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [*command, "--port", str(self.port)],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.tree = Tree(self.process.pid)
        self.key = ""

    def caught_up(self, timeout: float = 900) -> float:
        """Seconds until the analytics store holds every stored event (0 for the ceiling)."""
        return 0.0

    def stored(self) -> int:
        return 0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Ceiling(Server):
    def __init__(self, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "uvicorn", "bench.ceiling_app:app"]
        command += ["--log-level", "warning", "--no-access-log", "--no-server-header"]
        super().__init__("ceiling", command, env, cwd=ROOT)
        wait_up(f"{self.url}/", self.process)


class Product(Server):
    """``sightline serve`` as users run it, on its own fresh data directory under ``work``."""

    def __init__(self, name: str, work: Path, env: dict[str, str]) -> None:
        self.data_dir = work / name
        self.data_dir.mkdir(parents=True)
        self.database = self.data_dir / "sightline.db"
        setup = subprocess.run(
            [sys.executable, "-c", SETUP, f"sqlite:///{self.database}", EMAIL, PASSWORD, ORIGIN_HOST],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            check=True,
        )
        site = json.loads(setup.stdout.strip().splitlines()[-1])
        command = [sys.executable, "-m", "sightline.cli", "serve", "--data-dir", str(self.data_dir)]
        super().__init__(name, [*command, "--log-level", "warning"], env, cwd=work)
        self.key = str(site["key"])
        wait_up(f"{self.url}/healthz", self.process)
        self.client = httpx.Client(base_url=self.url, headers={"Origin": self.url}, timeout=30)
        self.client.post("/api/login", json={"email": EMAIL, "password": PASSWORD}).raise_for_status()

    def caught_up(self, timeout: float = 900) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            figures = self.client.get("/api/health").json()["services"]["store"]
            if figures["status"] != "down" and figures["lag_events"] == 0:
                return time.monotonic() - started
            time.sleep(0.1)
        return float("nan")

    def stored(self) -> int:
        with sqlite3.connect(self.database) as conn:
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])

    def stop(self) -> None:
        self.client.close()
        super().stop()
