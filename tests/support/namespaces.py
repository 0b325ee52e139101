"""A file system of the test's own: a small tmpfs in a private mount namespace (``unshare``).

A full disk or a read-only data directory cannot be made with ``chmod`` when the tests run as root
(root writes anyway), so these tests mount a real tmpfs, fill it or remount it read-only, and run
Sightline inside the namespace. ``unshare --map-root-user`` needs no privilege where the kernel
allows user namespaces; where it does not, the tests that need it are skipped, saying why.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@cache
def _unshare_works() -> str | None:
    """None when a private tmpfs can be mounted here, else why not."""
    try:
        probe = subprocess.run(
            ["unshare", "--mount", "--map-root-user", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare cannot run: {exc}"
    return None if probe.returncode == 0 else f"no private tmpfs here: {probe.stderr.strip()}"


def in_tmpfs(directory: Path, size: str, script: str, *args: str, timeout: float = 120) -> str:
    """Run ``python -c script DIRECTORY *args`` with ``directory`` a fresh tmpfs of ``size``.

    The script sees the tmpfs (and may remount it: ``mount -o remount,ro DIRECTORY``); nobody else
    does, and it is gone when the script ends. Returns the script's standard output.
    """
    why = _unshare_works()
    if why is not None:
        pytest.skip(why)
    directory.mkdir(parents=True, exist_ok=True)
    python = " ".join(shlex.quote(p) for p in [sys.executable, "-c", script, str(directory), *args])
    command = f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(str(directory))} && exec {python}"
    done = subprocess.run(
        ["unshare", "--mount", "--map-root-user", "sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
