"""A real Sightline server process (``sightline serve``) on a free loopback port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.support import waits
from tests.support.http import TLS
from tests.support.ports import free_port

SETUP_LINK = re.compile(r"(http://\S+/setup\?token=\S+)")
# Modules of the tests' environment that Sightline does not depend on, hidden from its processes, as
# an installed server has none of them: pandas (here for chDB) cost every store process 0.2 s of CPU,
# imported by pyarrow at its first array, and Pygments (for pytest) each migration 0.07 s, loaded by
# Alembic's Mako. A server whose events go to chDB needs pandas: it keeps them.
STORE_READY = "analytics store ready ("  # the server's log lines (store/client.py)
STORE_UNAVAILABLE = "the analytics store is unavailable: "
AS_INSTALLED = Path(__file__).resolve().parent / "installed"


class LiveServer:
    """``sightline serve`` in a subprocess; stdout is collected so tests can read the setup link."""

    def __init__(
        self,
        data_dir: Path,
        database_url: str | None = None,
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.host = host  # the listen address; tests reach it on 127.0.0.1 either way
        self.data_dir = data_dir
        self.database_url = database_url
        self.port = port or free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.origin = self.base_url
        self.extra_env = dict(env or {})
        self.output: list[str] = []
        self.process: subprocess.Popen[str] | None = None

    def start(self, timeout: float = waits.START, wait_for_store: bool = True) -> LiveServer:
        command = [
            sys.executable,
            "-m",
            "sightline.cli",
            "serve",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
        ]
        if self.database_url:
            command += ["--database-url", self.database_url]
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("SIGHTLINE_") or k.startswith("SIGHTLINE_TEST_")  # the tests' switches
        }
        env.update(self.extra_env)
        env["PYTHONUNBUFFERED"] = "1"
        if not env.get("SIGHTLINE_EVENTS_URL", "").startswith("chdb://"):
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(AS_INSTALLED), env.get("PYTHONPATH")]))
        said_before = len(self.output)  # a restarted server: only this run's lines count
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        self._reader = threading.Thread(target=self._collect, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        # One client for all the polls: a new one per poll cost 55 ms of CPU (its TLS context), taken
        # from the very server being waited for on a loaded machine.
        with httpx.Client(verify=TLS, timeout=5) as poller:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError("server exited:\n" + "".join(self.output))
                try:
                    if poller.get(self.base_url + "/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            else:
                self.stop()
                raise RuntimeError("server did not start:\n" + "".join(self.output))
        if wait_for_store:
            self.wait_for_store(deadline, said_before)
        return self

    def wait_for_store(self, deadline: float, said_before: int = 0) -> None:
        """Until the server's analytics store process said it is ready or why it is not.

        The server answers before its store process is up (reports answer 503 until then, after
        waiting a while); on a loaded machine the store may take longer than that wait, so a test
        that asks a report right away would see a 503 that no user of an idle server sees.
        """
        while time.monotonic() < deadline:
            said = "".join(self.output[said_before:])
            if STORE_READY in said or STORE_UNAVAILABLE in said:
                return
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError("server exited:\n" + said)
            time.sleep(0.05)
        raise RuntimeError("the server's analytics store did not start:\n" + "".join(self.output))

    def _collect(self) -> None:
        """Read the output until every process writing to it is gone, then close it.

        The server's helper process (ingest's writer) shares this pipe, so the pipe ends when the
        last of them exits, which may be after the server itself was killed.
        """
        assert self.process is not None
        stream = self.process.stdout
        assert stream is not None
        try:
            for line in stream:
                self.output.append(line)
        finally:
            stream.close()

    def setup_link(self) -> str | None:
        match = SETUP_LINK.search("".join(self.output))
        return match.group(1) if match else None

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to flush or clean up."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=waits.STOP)
        self._close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=waits.STOP)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=waits.STOP)
        self._close()

    def _close(self) -> None:
        # The reader closes the pipe once nobody writes to it; closing it here while the reader
        # waits would block on the stream's lock for as long as a helper process outlives us.
        if self.process is not None and self.process.stdout is not None:
            self._reader.join(timeout=5)

    def client(self, **kwargs: object) -> httpx.Client:
        """An httpx client that sends the console's Origin, as a browser on the console would."""
        headers = {"Origin": self.origin}
        kwargs.setdefault("verify", TLS)
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30, **kwargs)  # type: ignore[arg-type]


def create_owner(server: LiveServer, email: str, password: str) -> httpx.Cookies | None:
    """An owner account on ``server``: made through the one-time setup link while the server runs and
    its link is unused, as a new user makes it (returning that owner's signed-in session); else with
    ``sightline create-owner``, as an operator adds one (returning None). The link costs one request
    where the command cost a Python process, 1.2 s of CPU."""
    link = server.setup_link() if server.process is not None and server.process.poll() is None else None
    if link is not None:
        token = parse_qs(urlsplit(link).query)["token"][0]
        with server.client() as client:
            made = client.post("/setup", json={"token": token, "email": email, "password": password})
            if made.status_code == 201:
                return httpx.Cookies(client.cookies)
        assert made.status_code == 403, made.text  # the link is used up: an owner exists already
    command = [
        sys.executable,
        "-m",
        "sightline.cli",
        "create-owner",
        "--email",
        email,
        "--data-dir",
        str(server.data_dir),
    ]
    if server.database_url:
        command += ["--database-url", server.database_url]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIGHTLINE_")}
    env["SIGHTLINE_OWNER_PASSWORD"] = password
    subprocess.run(command, check=True, capture_output=True, env=env, timeout=waits.COMMAND)
    return None
