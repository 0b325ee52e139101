"""The shape of the code a newcomer relies on: what a module keeps private stays private, and every
package has its tests in a folder of the same name."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.support import costs, scheduling, sharing

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "src"
PACKAGE = SOURCES / "sightline"
TESTS = ROOT / "tests"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCES).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = SOURCES.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The module an import names, relative imports resolved against ``module``'s package."""
    if not node.level:
        return node.module or ""
    package = module.split(".")
    base = package[: len(package) - node.level + (1 if _is_package(module) else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _is_package(module: str) -> bool:
    return (SOURCES.joinpath(*module.split(".")) / "__init__.py").is_file()


def private_imports(module: str, text: str) -> Iterator[str]:
    """Each private name of another Sightline module that ``module``'s ``text`` imports or reads
    off a module."""
    tree = ast.parse(text)
    modules: set[str] = set()  # local names bound to Sightline modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if not source.startswith("sightline"):
                continue
            for alias in node.names:
                if _private(alias.name) and source != module:
                    yield f"{module}:{node.lineno} imports {alias.name} from {source}"
                if _is_module(f"{source}.{alias.name}"):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sightline"):
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and _private(node.attr)
        ):
            yield f"{module}:{node.lineno} reads {node.value.id}.{node.attr}"


def test_no_module_imports_a_private_name_of_another_module() -> None:
    found = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in private_imports(_module_name(path), path.read_text("utf-8"))
    ]
    assert not found, "make what is shared public where it belongs:\n" + "\n".join(found)


def test_the_private_name_check_sees_a_from_import_a_relative_one_and_a_module_attribute() -> None:
    text = "\n".join(
        [
            "from sightline.console.reports import _store",
            "from .reports import _report",
            "from sightline.console import reports",
            "from sightline.console.exports import _own",  # its own private name: allowed
            "from sightline.console.reports import __all__",
            "reports._documented('x')",
        ]
    )
    found = list(private_imports("sightline.console.exports", text))
    assert found == [
        "sightline.console.exports:1 imports _store from sightline.console.reports",
        "sightline.console.exports:2 imports _report from sightline.console.reports",
        "sightline.console.exports:6 reads reports._documented",
    ]


def test_every_package_has_a_test_folder_of_its_own() -> None:
    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    missing = [name for name in packages if not (TESTS / name / "__init__.py").is_file()]
    assert not missing, f"packages without a folder of tests under tests/: {missing}"


def test_every_module_named_for_shared_servers_exists() -> None:
    named = set(sharing.SHARING) | set(sharing.PACKAGE_UNITS) | set(sharing.SHARES_WITH)
    gone = sorted(path for path in named if not (ROOT / path).is_file())
    assert not gone, f"tests/support/sharing.py names modules that are not there (moved?): {gone}"


def test_the_suite_hands_out_the_longest_recorded_module_first_whatever_its_number_of_tests() -> None:
    units = {
        "tests/a.py": {f"tests/a.py::t{n}": False for n in range(50)},
        "tests/walk.py": {"tests/walk.py::t": False},
        "tests/new.py": {f"tests/new.py::t{n}": False for n in range(30)},
    }
    runs = {"tests/a.py": (50, 25.0), "tests/walk.py": (1, 400.0)}  # 2.3 s a test in all
    assert scheduling.longest_first(units, runs) == ["tests/walk.py", "tests/new.py", "tests/a.py"]


def test_the_recorded_costs_the_scheduler_reads_name_modules_with_tests_and_seconds() -> None:
    runs = scheduling.recorded()
    assert runs, "tests/support/suite-costs.tsv is missing: copy test-artifacts/suite-costs.tsv of a run"
    assert all(tests > 0 and wall >= 0 for tests, wall in runs.values())


def test_the_costs_count_a_child_process_that_is_still_running() -> None:
    """A process kept across modules (a Chromium, a shared server) is charged while it runs, not
    only once it is reaped: a child that used 0.4 s of CPU and still runs shows in ``live_cpu``."""
    burn = (
        "import time\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 0.4: pass\n"
        "print('burnt', flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == "burnt\n"
            assert costs.live_cpu(os.getpid()) >= 0.35
        finally:
            child.kill()


# What gives a period menu away, however it is written: its group's name, its periods' labels, or a
# list of range names of its own.
PERIOD_MENU = re.compile(r'"Date range"|"More periods|label: "(Today|7 days|30 days)"|name: "(today|7d|30d)"')


def test_the_console_has_one_period_menu_that_every_page_with_a_period_uses() -> None:
    ui = ROOT / "ui" / "src"
    menus = sorted(
        str(path.relative_to(ui)) for path in ui.rglob("*.tsx") if PERIOD_MENU.search(path.read_text())
    )
    assert menus == ["reports/PeriodControls.tsx"], f"period menus written more than once: {menus}"
    for page in ("reports/ReportsPage.tsx", "pages/Overview.tsx", "conversions/ConversionsPage.tsx"):
        assert 'from "../reports/PeriodControls"' in (ui / page).read_text().replace(
            '"./PeriodControls"', '"../reports/PeriodControls"'
        ), f"{page} does not use the one period menu"
