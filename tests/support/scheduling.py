"""How pytest-xdist hands the suite's work to its workers under ``--dist loadscope``.

A unit of work is a module, or a package's modules that share servers (``sharing.unit_of``). Units
go out longest first: by the wall time their modules took in a recorded run (``COSTS``, written from
a run's ``test-artifacts/suite-costs.tsv`` by ``tests/support/costs.py``), a unit no run recorded by
its number of tests times the recorded seconds per test. xdist's own order (most tests first) sent
a one-test module that walks the whole console last, and the run waited minutes for it alone. One
preference goes before length: a worker whose last unit used a browser
gets the largest waiting unit that uses one too, and one whose last unit used none gets the largest
that uses none, while any is left. A worker keeps its Chromium only while its modules use a browser
(``close_kept`` in tests/conftest.py: Playwright's driver keeps an event loop in the worker's thread,
where ``asyncio.run()`` then refuses to run), and a Playwright driver and a Chromium launched again
cost 1.5 s of CPU: handed out in plain size order, browser and other modules alternated on each
worker and Chromium started again for most browser modules.

Only the workers know which tests use a browser (the ``browser`` fixture, however reached); each
writes the units that do to a directory the controller names (``SIGHTLINE_TEST_BROWSER_UNITS``)
when its collection ends, before xdist schedules anything.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.support import sharing

UNITS_DIR = "SIGHTLINE_TEST_BROWSER_UNITS"
COSTS = Path(__file__).with_name("suite-costs.tsv")  # a recorded run's figures; refresh from one


def recorded() -> dict[str, tuple[int, float]]:
    """Each module's tests and wall seconds in the recorded run (none when the file is missing)."""
    found: dict[str, tuple[int, float]] = {}
    if COSTS.exists():
        for line in COSTS.read_text(encoding="utf-8").splitlines()[1:]:
            module, tests, wall, _cpu = line.split("\t")
            found[module] = (int(tests), float(wall))
    return found


def longest_first(units: dict[str, dict[str, bool]], runs: dict[str, tuple[int, float]]) -> list[str]:
    """The units, longest first by their modules' recorded wall time; a module no run recorded
    counts its tests at the recorded run's seconds per test."""
    tests_in_all = sum(tests for tests, _ in runs.values())
    per_test = sum(wall for _, wall in runs.values()) / tests_in_all if tests_in_all else 1.0

    def length(unit: str) -> float:
        modules: dict[str, int] = {}
        for nodeid in units[unit]:
            module = nodeid.split("::", 1)[0]
            modules[module] = modules.get(module, 0) + 1
        return sum(runs[m][1] if m in runs else n * per_test for m, n in modules.items())

    return sorted(units, key=lambda unit: -length(unit))


def unit_of(nodeid: str) -> str:
    """The unit of work of a test: ``sharing``'s, else its module (or class), as xdist's own."""
    return sharing.unit_of(nodeid) or nodeid.rsplit("::", 1)[0]


def prepare(config: pytest.Config) -> None:
    """In the controller of a ``loadscope`` run: the directory its workers report to."""
    if hasattr(config, "workerinput") or config.getoption("dist", None) != "loadscope":
        return
    directory = tempfile.mkdtemp(prefix="sightline-units-")
    os.environ[UNITS_DIR] = directory
    config.add_cleanup(lambda: shutil.rmtree(directory, ignore_errors=True))


def report(config: pytest.Config, items: Sequence[pytest.Item]) -> None:
    """In a worker: the units with a test that uses a browser, written for the controller."""
    directory = os.environ.get(UNITS_DIR)
    workerinput = getattr(config, "workerinput", None)
    if directory is None or workerinput is None:
        return
    units = sorted({unit_of(item.nodeid) for item in items if "browser" in getattr(item, "fixturenames", ())})
    path = Path(directory) / f"{workerinput['workerid']}.json"
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(units), encoding="utf-8")
    partial.replace(path)


def browser_units() -> frozenset[str]:
    """The units that use a browser, as the workers reported them (none if none did)."""
    directory = os.environ.get(UNITS_DIR)
    if directory is None:
        return frozenset()
    for path in sorted(Path(directory).glob("*.json")):
        return frozenset(json.loads(path.read_text(encoding="utf-8")))
    return frozenset()


def make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class SharedServerScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def __init__(self, config: pytest.Config, log: object) -> None:
            super().__init__(config, log)
            self._browsing: dict[object, bool] = {}  # worker -> whether its last unit used a browser
            self._browser_units: frozenset[str] | None = None
            self._ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node: object) -> None:
            if not self._ordered:  # the first assignment: the queue is whole
                self._ordered = True
                for unit in longest_first(dict(self.workqueue), recorded()):
                    self.workqueue.move_to_end(unit)
            if self._browser_units is None:
                self._browser_units = browser_units()
            browsing = self._browsing.get(node)
            if browsing is not None:
                same = next((s for s in self.workqueue if (s in self._browser_units) == browsing), None)
                if same is not None:
                    self.workqueue.move_to_end(same, last=False)
            self._browsing[node] = next(iter(self.workqueue)) in self._browser_units
            super()._assign_work_unit(node)

    return SharedServerScheduling(config, log)
