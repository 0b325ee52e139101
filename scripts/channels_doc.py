"""Rewrite the channels table in docs/reports.md from the rules: `python scripts/channels_doc.py`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sightline.channels import markdown_table

DOC = Path(__file__).resolve().parent.parent / "docs" / "reports.md"
BLOCK = re.compile(r"(<!-- channels-table:start -->\n).*?(\n<!-- channels-table:end -->)", re.S)


def main() -> int:
    text = DOC.read_text("utf-8")
    DOC.write_text(BLOCK.sub(lambda m: m.group(1) + markdown_table() + m.group(2), text), "utf-8")
    print(f"updated {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
