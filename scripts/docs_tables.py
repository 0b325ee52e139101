"""Rewrite what is generated from a registry: `python scripts/docs_tables.py`.

Each table in docs/ sits between ``<!-- NAME-table:start -->`` and ``<!-- NAME-table:end -->`` in
its page; the console's lists of dimensions are a file of their own (``FILES``), which the UI's
build reads. A test per table and file fails when it and its registry drift.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from sightline import channels, dimensions, settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# (page, table name, the registry's markdown)
TABLES: list[tuple[str, str, Callable[[], str]]] = [
    ("settings.md", "settings", settings.markdown_table),
    ("reports.md", "channels", channels.markdown_table),
    ("reports.md", "dimensions", dimensions.markdown_table),
]

# (file, its content): files generated whole
FILES: list[tuple[Path, Callable[[], str]]] = [
    (ROOT / "ui" / "src" / "reports" / "dimensions.gen.ts", dimensions.typescript),
]


def main() -> int:
    for page, name, table in TABLES:
        doc = DOCS / page
        block = re.compile(rf"(<!-- {name}-table:start -->\n).*?(\n<!-- {name}-table:end -->)", re.S)
        text, markdown = doc.read_text("utf-8"), table()
        doc.write_text(block.sub(lambda match: match.group(1) + markdown + match.group(2), text), "utf-8")  # noqa: B023
        print(f"updated the {name} table of {doc}", file=sys.stderr)
    for path, content in FILES:
        path.write_text(content(), "utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
