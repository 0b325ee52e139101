"""Fixtures shared by every test: databases on both engines and live servers."""

from __future__ import annotations

import os
import sqlite3
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from sightline.database import Database, open_database
from tests.support import costs, scheduling, sharing
from tests.support.browser import close_kept
from tests.support.clickhouse import RealServer, StandIn
from tests.support.objectstore import ObjectStore
from tests.support.ports import free_port
from tests.support.postgres import PostgresServer
from tests.support.server import LiveServer, create_owner

# chdb:// (ClickHouse embedded in the process) is a store for Sightline's own tests only: the
# settings refuse it unless this is set (tests/support/server.py passes SIGHTLINE_TEST_* on).
os.environ.setdefault("SIGHTLINE_TEST_CHDB", "1")

BACKENDS = ["sqlite", "postgresql"]
OWNER_EMAIL = "owner@example.com"
OWNER_PASSWORD = "correct horse battery staple"


def pytest_configure(config: pytest.Config) -> None:
    _keep_bytecode()
    scheduling.prepare(config)
    costs.register(config)
    # A page's assertions wait for it to get there: 5 s (Playwright's default) is short for a
    # console page on a two-core machine running the suite in parallel workers. Only a failing
    # assertion waits the full time.
    expect.set_options(timeout=15_000)


def _keep_bytecode() -> None:
    """Every Python process of the run keeps the modules it compiles, as an installed Sightline does.

    With ``PYTHONDONTWRITEBYTECODE`` set (some shells and CI images set it), each server, each of
    its helper processes and each command-line run compiled Sightline's modules from source again:
    0.8 s of CPU per server start. The compiled files go next to the sources, where ``make install``
    compiled the environment's packages; where the checkout or the environment is read-only, to a
    cache outside them (``PYTHONPYCACHEPREFIX``), shared by the test workers and every process they
    start. That cache is Python's only place for every module then, so each process of a fresh run
    compiled the environment's packages again until one had written them (a fresh run's workers
    collected the tests with about 10 s more of CPU in all).
    """
    if not (sys.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")):
        return
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    checkout = Path(__file__).resolve().parents[1]
    if sys.pycache_prefix or all(
        os.access(p, os.W_OK) for p in (checkout / "src", sysconfig.get_paths()["purelib"])
    ):
        return
    prefix = str(Path(tempfile.gettempdir()) / f"sightline-pycache-{os.getuid()}")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.pycache_prefix = prefix


@pytest.fixture(scope="session")
def clickhouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn | RealServer]:
    """ClickHouse over HTTP for the tests: the server ``SIGHTLINE_TEST_CLICKHOUSE_URL`` names, or
    else the stand-in (``tests/support/clickhouse.py``: chDB behind the HTTP interface and its
    default limits), in a process of its own. ``.url(database)`` creates a database, gives its URL."""
    real = os.environ.get("SIGHTLINE_TEST_CLICKHOUSE_URL")
    if real:
        yield RealServer(real)
        return
    server = StandIn(tmp_path_factory.mktemp("clickhouse"), free_port()).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = PostgresServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def object_store() -> Iterator[ObjectStore]:
    """An S3-compatible object store (moto's server) for the whole session."""
    store = ObjectStore().start()
    yield store
    store.stop()


@pytest.fixture
def s3_env(object_store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> ObjectStore:
    """The object store, with this process's AWS variables set for it (and only for it)."""
    for name, value in object_store.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return object_store


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database at the newest schema, migrated once per test process (``database_url_for``)."""
    path = tmp_path_factory.mktemp("sqlite-template") / "sightline.db"
    open_database(f"sqlite:///{path}").dispose()
    return path


def database_url_for(request: pytest.FixtureRequest, backend: str, directory: Path) -> str:
    """A new database of ``backend`` at the newest schema (SQLite's in ``directory``), a copy of one
    migrated once per test process: a server starting on it, or a test opening it, only checks that
    it is current instead of running every migration (0.15-0.3 s of CPU each, and PostgreSQL's)."""
    if backend == "postgresql":
        pg: PostgresServer = request.getfixturevalue("postgres")
        return pg.create_migrated_database()
    template: Path = request.getfixturevalue("sqlite_template")
    path = directory / "sightline.db"
    with closing(sqlite3.connect(template)) as source, closing(sqlite3.connect(path)) as copy:
        source.backup(copy)
    return f"sqlite:///{path}"


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url_for(request, request.param, tmp_path)


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    database = open_database(database_url)
    yield database
    database.dispose()


StartServer = Callable[..., LiveServer]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """Start fresh servers (SQLite unless a database URL is given); all stop at the end of the test."""
    started: list[LiveServer] = []

    def start(database_url: str | None = None, env: dict[str, str] | None = None) -> LiveServer:
        data_dir = tmp_path / f"data{len(started)}"
        server = LiveServer(data_dir, database_url, env)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``console_server`` runs on both engines, except under the browser tests (``console``):
    the console reaches the database only through the API, whose tests run on both, so a page
    is driven on SQLite alone unless its module asks for more with ``BROWSER_BACKENDS``."""
    if "console_server" not in metafunc.fixturenames:
        return
    for mark in metafunc.definition.iter_markers("parametrize"):
        if "console_server" in str(mark.args[0]):
            return  # the module chose its engines
    defs = metafunc.definition._fixtureinfo.name2fixturedefs.get("console_server", ())
    if defs and defs[-1].params is not None:
        return  # a module's own console_server fixture, with its own parameters
    backends = BACKENDS
    if "console" in metafunc.fixturenames:
        backends = getattr(metafunc.module, "BROWSER_BACKENDS", ["sqlite"])
    metafunc.parametrize("console_server", backends, indirect=True, scope="module")


@pytest.fixture(scope="module")
def console_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """One running server per module and database engine, with an owner account; a module listed
    in ``tests.support.sharing`` gets its package's shared server of that engine instead."""

    def start() -> LiveServer:
        directory = tmp_path_factory.mktemp(f"server-{request.param}")
        url = database_url_for(request, request.param, directory)
        server = LiveServer(directory / "data", url, env={"SIGHTLINE_ALLOW_PRIVATE_ADDRESSES": "true"})
        server.start()
        session = create_owner(server, OWNER_EMAIL, OWNER_PASSWORD)
        if session is not None:
            _SESSIONS[server.base_url] = session  # the first ``signed_in`` needs no Argon2 sign-in
        return server

    yield from served(request, f"console-{request.param}", start)


def served(request: pytest.FixtureRequest, key: str, start: Callable[[], LiveServer]) -> Iterator[LiveServer]:
    """The body of a module's server fixture: the server ``start`` makes, stopped after the module;
    for a module listed in ``tests.support.sharing``, the shared server ``key`` (one per kind of
    server and engine) instead."""
    if sharing.shares(request.node.nodeid):
        request.getfixturevalue("shared_servers")
        yield sharing.server(key, start)
        return
    server = start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_servers(request: pytest.FixtureRequest) -> Iterator[None]:
    """Stops the shared servers still running at the end; set up after PostgreSQL, so before it
    is stopped (``pytest_runtest_teardown`` stops them earlier, after their last module)."""
    request.getfixturevalue("postgres")
    yield
    sharing.stop_all()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """After the last test of a run of modules sharing servers (its module's fixtures torn down),
    the shared servers stop: none idles while other modules run. So does the kept Chromium after
    the last of a run of modules using a browser."""
    yield
    if nextitem is None or not sharing.shares(nextitem.nodeid):
        sharing.stop_all()
    # The kept Chromium closes before a test of another module that uses no browser: Playwright's
    # driver keeps an event loop running in this thread, where asyncio.run() would then refuse to run.
    if nextitem is None or (
        nextitem.nodeid.split("::", 1)[0] != item.nodeid.split("::", 1)[0]
        and "browser" not in getattr(nextitem, "fixturenames", ())
    ):
        close_kept()


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """Under ``--dist loadscope``, a package's modules that share servers are one unit of work, run
    one after the other on one worker, and so are the parts of the SDK package, which shares a
    server of its own (``tests.support.sharing``); every other module is its own. A worker gets
    units that use a browser after one that did (``tests.support.scheduling``)."""
    if config.getoption("dist", None) != "loadscope":
        return None
    return scheduling.make_scheduler(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    scheduling.report(config, items)


def sign_in(server: LiveServer, email: str = OWNER_EMAIL, password: str = OWNER_PASSWORD) -> httpx.Client:
    client = server.client()
    response = client.post("/api/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    return client


# Owner sessions by server: a test's fresh client reuses the session of an earlier test of the same
# server while it is still valid (an Argon2 sign-in costs a quarter of a CPU-second on this machine).
_SESSIONS: dict[str, httpx.Cookies] = {}


def signed_in(server: LiveServer) -> httpx.Client:
    """A new client holding a valid owner session: the one an earlier test left, else a new one."""
    kept = _SESSIONS.get(server.base_url)
    if kept is not None:
        client = server.client(cookies=kept)
        if client.get("/api/me").status_code == 200:
            return client
        client.close()
    client = sign_in(server)
    _SESSIONS[server.base_url] = httpx.Cookies(client.cookies)
    return client


def owner_of(server: LiveServer) -> Iterator[httpx.Client]:
    """The body of an ``owner`` fixture: a client signed in as the owner of ``server`` (through
    ``signed_in``), closed after its tests. A module with a server of its own writes
    ``yield from owner_of(server)``."""
    client = signed_in(server)
    yield client
    client.close()


@pytest.fixture
def owner(console_server: LiveServer) -> Iterator[httpx.Client]:
    """A client signed in as the owner of ``console_server`` (a test that signs it out or ends its
    session leaves the next test to sign in again)."""
    yield from owner_of(console_server)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With ``SIGHTLINE_TEST_TIMES=FILE``, each phase of each test is appended to FILE as it ends
    (outcome, seconds, id): a run cut short still says where its time went and what failed."""
    path = os.environ.get("SIGHTLINE_TEST_TIMES")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller writes every worker's reports
    if path and (report.when == "call" or report.outcome != "passed" or report.duration > 1):
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{report.outcome}\t{report.when}\t{report.duration:.2f}\t{report.nodeid}\n")
