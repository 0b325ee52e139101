"""Servers shared by the test modules of one package that cannot tell a fresh server from a used one.

A Sightline server costs about 5 s of CPU to start (the server, its store and writer processes) and
stop, and most modules start one per database engine. The modules listed in ``SHARING`` use one
server per kind (``console_server``, ``ingest_server``) and engine instead, as it was left by the
modules before them. Each of them:

- reads and writes only sites it creates itself, on domains no other module uses (a uuid or a
  counter), and owners of its own with their own e-mail addresses;
- changes nothing server-wide (settings, the first owner's account, members, API keys, throttles,
  ingest's health) and counts nothing across the whole server (no "the owner's sites are these");
- is no browser test that lands on a list of everything the owner has (the sites, the surveys).

Sites are not deleted between modules: on SQLite a new site may take the id of a deleted one, and
the analytics store then purges the new site's events as the deleted site's (left to the store's
owners). A module joins by being added here, after checking it against those rules; one that
breaks any keeps its own server (the ingest back-pressure module, for one, leaves ingest's health
degraded; the reports pages list the owner's sites).

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
        "tests/autocapture/test_reserved_events.py",
        "tests/console/test_reports_params.py",
        "tests/console/test_smoke.py",
        "tests/goals/test_api.py",
        "tests/ingest/test_config.py",
        "tests/ingest/test_drops.py",
        "tests/ingest/test_referrer_spam.py",
        "tests/ingest/test_pixel.py",
        "tests/ingest/test_events.py",
        "tests/ingest/test_exclusions.py",
        "tests/ingest/test_script.py",
        "tests/recordings/test_console_api.py",
        "tests/recordings/test_ingest.py",
        "tests/reports/test_api.py",
        "tests/surveys/test_console_api.py",
        "tests/surveys/test_export.py",
        "tests/surveys/test_summary.py",
        "tests/surveys/test_widget_api.py",
        "tests/web/test_compression.py",
        "tests/web/test_privacy_settings.py",
        "tests/web/test_recordings_pages.py",
        "tests/web/test_shell.py",
    }
)

# A module that shares the servers of another package's modules (its own package has no server
# kind of its own) joins that package's unit, so the servers start once for both.
SHARES_WITH = {"tests/autocapture/test_reserved_events.py": "tests/ingest"}

_servers: dict[str, LiveServer] = {}


# The SDK modules share their package's own server (``sdk_server`` in tests/sdk/conftest.py), which
# stays up only while the next test is of the package too: with each module a unit of its own, xdist
# ran other modules in between and the server started again for nearly every module. Its modules go
# in two units of about equal time (a new module not named here is a unit of its own). So do the
# recording package's browser modules, with its ``server`` (tests/recordings/conftest.py).
PACKAGE_UNITS = {
    "tests/sdk/test_capture_measures.py": "tests/sdk, part 1",
    "tests/sdk/test_consent.py": "tests/sdk, part 1",
    "tests/sdk/test_cookieless.py": "tests/sdk, part 1",
    "tests/sdk/test_methods.py": "tests/sdk, part 1",
    "tests/sdk/test_pageviews.py": "tests/sdk, part 1",
    "tests/sdk/test_size.py": "tests/sdk, part 1",
    "tests/sdk/test_capture_links.py": "tests/sdk, part 2",
    "tests/sdk/test_delivery.py": "tests/sdk, part 2",
    "tests/sdk/test_privacy.py": "tests/sdk, part 2",
    "tests/sdk/test_validation.py": "tests/sdk, part 2",
    "tests/recordings/test_capture.py": "tests/recordings, browser",
    "tests/recordings/test_console_pages.py": "tests/recordings, browser",
    "tests/recordings/test_heatmap_overlay.py": "tests/recordings, browser",
    "tests/recordings/test_replay.py": "tests/recordings, browser",
}


def shares(nodeid: str) -> bool:
    """Whether the test (or module) of ``nodeid`` is of a module listed in ``SHARING``."""
    return nodeid.split("::", 1)[0] in SHARING


def unit_of(nodeid: str) -> str | None:
    """The unit of work of the test under ``--dist loadscope`` when it is not its module: a
    package's sharing modules together, or the part of a package that shares its own server."""
    module = nodeid.split("::", 1)[0]
    if module in SHARING:
        return f"shared servers of {SHARES_WITH.get(module, PurePosixPath(module).parent)}"
    return PACKAGE_UNITS.get(module)


def server(key: str, start: Callable[[], LiveServer]) -> LiveServer:
    """The running shared server ``key``, else a new one from ``start``."""
    running = _servers.get(key)
    if running is not None and running.process is not None and running.process.poll() is None:
        return running
    if running is not None:
        running.stop()
    _servers[key] = started = start()
    return started


def stop_all() -> None:
    while _servers:
        _servers.popitem()[1].stop()
