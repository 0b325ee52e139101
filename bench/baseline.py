"""The product at another git ref, to measure a change before and after in one run.

``Baseline(ref)`` checks the ref out with ``git worktree add --detach`` into a temporary
directory; a server started with ``env()`` runs that tree's ``src`` (``PYTHONPATH``, ahead of the
editable install of the current tree) on the same virtual environment, so the two differ only
in Sightline's own code. The built SDK and console are linked from the current tree (they are
build output, not in git). ``close()`` removes the worktree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILT = ("src/sightline/web/static/sdk", "src/sightline/web/static/console")


class Baseline:
    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", f"{ref}^{{commit}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.parent = Path(tempfile.mkdtemp(prefix="sightline-baseline-"))
        self.tree = self.parent / "tree"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(self.tree), self.commit],
            check=True,
        )
        for built in BUILT:
            source, target = ROOT / built, self.tree / built
            if source.is_dir() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(source, target_is_directory=True)

    def env(self, base: dict[str, str]) -> dict[str, str]:
        path = [str(self.tree / "src")] + ([base["PYTHONPATH"]] if base.get("PYTHONPATH") else [])
        return {**base, "PYTHONPATH": os.pathsep.join(path)}

    def close(self) -> None:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(self.tree)],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.parent, ignore_errors=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True, check=False)
