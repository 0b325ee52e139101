"""Which pages a survey is shown on: include and exclude rules over the page path.

A rule is ``{"match": "exact" | "prefix" | "glob", "path": "/..."}``:

- ``exact``: the page path equals ``path``.
- ``prefix``: the page path starts with ``path`` (``/blog/`` matches ``/blog/a`` but not ``/blog``).
- ``glob``: the whole page path matches ``path``, where ``*`` stands for any run of characters
  inside one path segment (never ``/``) and ``**`` for any run of characters including ``/``.

A page is targeted when it matches at least one include rule (no include rules: every page) and
no exclude rule. Paths are compared as the browser reports them (``location.pathname``): case
matters and the query string is not part of the path. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

MATCH_KINDS = ("exact", "prefix", "glob")


@lru_cache(maxsize=1024)
def glob_pattern(path: str) -> re.Pattern[str]:
    """The regular expression for one glob rule path."""
    parts: list[str] = []
    for token in re.split(r"(\*\*|\*)", path):
        if token == "**":
            parts.append(".*")
        elif token == "*":
            parts.append("[^/]*")
        elif token:
            parts.append(re.escape(token))
    return re.compile("".join(parts), re.DOTALL)


def rule_matches(rule: Mapping[str, Any], path: str) -> bool:
    kind = rule["match"]
    pattern = str(rule["path"])
    if kind == "exact":
        return path == pattern
    if kind == "prefix":
        return path.startswith(pattern)
    if kind == "glob":
        return glob_pattern(pattern).fullmatch(path) is not None
    raise ValueError(f"unknown match kind {kind!r}")


def any_rule_matches(rules: Iterable[Mapping[str, Any]], path: str) -> bool:
    return any(rule_matches(rule, path) for rule in rules)


def is_targeted(targeting: Mapping[str, Any], path: str) -> bool:
    """True when a survey with ``targeting`` may be shown on the page at ``path``."""
    include = list(targeting.get("include") or [])
    exclude = list(targeting.get("exclude") or [])
    if include and not any_rule_matches(include, path):
        return False
    return not any_rule_matches(exclude, path)
