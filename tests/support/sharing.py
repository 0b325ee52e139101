"""Servers shared by the test modules of one package that cannot tell a fresh server from a used one.

A Sightline server costs about 5 s of CPU to start (the server, its store and writer processes) and
stop, and most modules start one per database engine. The modules listed in ``SHARING`` use one
server per engine and package instead: each of them only reads and writes the sites it creates
itself, changes nothing server-wide (settings, the owner's account, members, API keys, sessions,
throttles) and counts nothing across the whole server. The server of the modules before it is handed
over with the owner's sites deleted, so the module finds what a fresh server has. A module joins by
being added here, after checking it against those rules; a module that breaks one keeps its own.

Under pytest-xdist (``--dist loadscope``), ``conftest.pytest_xdist_make_scheduler`` hands a
package's sharing modules to one worker as one unit, one after the other; the shared servers stop
as soon as the next test is not from a sharing module, so no idle server is kept running.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from tests.support.server import LiveServer

SHARING = frozenset(
    {
        "tests/console/test_reports_params.py",
        "tests/console/test_smoke.py",
        "tests/goals/test_api.py",
        "tests/reports/test_api.py",
        "tests/surveys/test_console_api.py",
        "tests/surveys/test_export.py",
        "tests/surveys/test_summary.py",
        "tests/surveys/test_widget_api.py",
    }
)

_servers: dict[str, LiveServer] = {}


def group_of(nodeid: str) -> str | None:
    """The unit of work of a sharing module's test (its package), None for any other test."""
    module = nodeid.split("::", 1)[0]
    if module not in SHARING:
        return None
    return f"shared servers of {PurePosixPath(module).parent}"


def server(key: str, start: Callable[[], LiveServer], clear: Callable[[LiveServer], None]) -> LiveServer:
    """The running shared server ``key`` (``clear`` first takes away what earlier modules left on
    it), else a new one from ``start``."""
    running = _servers.get(key)
    if running is not None and running.process is not None and running.process.poll() is None:
        clear(running)
        return running
    if running is not None:
        running.stop()
    _servers[key] = started = start()
    return started


def stop_all() -> None:
    while _servers:
        _servers.popitem()[1].stop()
