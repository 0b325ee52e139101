"""The core script's size budget: at most 3,328 bytes gzipped once minified by esbuild.

3,072 until cookieless counting and the owner's exclusion link (about 190 bytes) came in.
"""

from __future__ import annotations

import gzip
import re

from tests.support.browser import STATIC, ensure_built

OUTPUT = STATIC / "sdk"

BUDGET = 3328


def test_core_script_is_at_most_3328_bytes_gzipped() -> None:
    core = ensure_built().read_bytes()
    size = len(gzip.compress(core, compresslevel=9))
    assert size <= BUDGET, f"analytics.js is {size} bytes gzipped; the budget is {BUDGET}"


def test_build_output_holds_only_files_the_server_serves() -> None:
    ensure_built()
    served = re.compile(r"^analytics(-[a-z0-9-]+)?\.js$")
    names = sorted(p.name for p in OUTPUT.iterdir())
    assert "analytics.js" in names
    assert [n for n in names if not served.match(n)] == []
