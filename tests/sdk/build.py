"""The built SDK (``src/sightline/web/static/sdk/``), rebuilt when a source in ``sdk/`` is newer."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk"
OUTPUT = ROOT / "src" / "sightline" / "web" / "static" / "sdk"
CORE = OUTPUT / "analytics.js"


def _newest_source() -> float:
    files = [*SDK.glob("src/**/*.ts"), SDK / "analytics.d.ts", SDK / "build.mjs", SDK / "package-lock.json"]
    return max(f.stat().st_mtime for f in files if f.exists())


def ensure_built() -> Path:
    """The core script's path, after ``npm run build`` when the output is missing or stale."""
    if not CORE.exists() or CORE.stat().st_mtime < _newest_source():
        if not (SDK / "node_modules").is_dir():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=SDK, check=True)
        subprocess.run(["npm", "run", "--silent", "build"], cwd=SDK, check=True)
    return CORE
