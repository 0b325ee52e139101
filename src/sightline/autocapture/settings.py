"""The autocapture switches of a site and its file-download extensions.

Each switch is a boolean column of ``sites`` (``capture_<name>``), a key of the site record's
``autocapture`` object in the console API, and, when on, a plugin name in ``/i/config``'s
``capture`` list (the snippet attribute ``data-<plugin>`` turns the same capture on per page).
"""

from __future__ import annotations

import re
from typing import Any

from sightline.errors import ApiError

# console/API name -> SDK plugin name (also the snippet attribute data-<plugin>)
SWITCHES: dict[str, str] = {
    "outbound_links": "outbound-links",
    "file_downloads": "file-downloads",
    "engagement": "engagement",
    "web_vitals": "web-vitals",
    "heatmaps": "heatmaps",
}

DEFAULT_EXTENSIONS: tuple[str, ...] = (
    "pdf", "csv", "txt", "rtf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "pps", "odt", "ods",
    "odp", "key", "epub", "zip", "gz", "tar", "bz2", "xz", "7z", "rar", "dmg", "pkg", "exe", "msi",
    "apk", "iso", "mp3", "wav", "wma", "midi", "mp4", "mov", "avi", "wmv", "mpeg",
)  # fmt: skip
MAX_EXTENSIONS = 50
_EXTENSION = re.compile(r"\A[a-z0-9]{1,10}\Z")
EXTENSIONS_FIELD = "autocapture.file_download_extensions"


def column(name: str) -> str:
    return f"capture_{name}"


def check_extensions(raw: object) -> tuple[str, ...]:
    """A list of 1-50 extensions of 1-10 letters or digits (a leading dot is dropped), lowercased."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_EXTENSIONS:
        raise ApiError(
            422,
            "invalid_extensions",
            f"Give 1 to {MAX_EXTENSIONS} file extensions, such as pdf or zip.",
            field=EXTENSIONS_FIELD,
        )
    found: list[str] = []
    for item in raw:
        value = item.strip().lstrip(".").lower() if isinstance(item, str) else ""
        if not _EXTENSION.match(value):
            raise ApiError(
                422,
                "invalid_extensions",
                f"{str(item)[:20]!r} is not a file extension: use 1 to 10 letters or digits, such as pdf.",
                field=EXTENSIONS_FIELD,
            )
        if value not in found:
            found.append(value)
    return tuple(found)


def stored_extensions(value: str | None) -> tuple[str, ...]:
    """The site's extensions as stored (comma-separated; NULL means the default list)."""
    return tuple(value.split(",")) if value else DEFAULT_EXTENSIONS


def public(row: Any) -> dict[str, Any]:
    """The ``autocapture`` object of the console's site record."""
    found: dict[str, Any] = {name: bool(row[column(name)]) for name in SWITCHES}
    found["file_download_extensions"] = list(stored_extensions(row["file_download_extensions"]))
    return found


def changes(raw: dict[str, Any]) -> dict[str, Any]:
    """Column values for a validated ``autocapture`` patch (switches and extensions)."""
    values: dict[str, Any] = {}
    for name in SWITCHES:
        if name in raw:
            if not isinstance(raw[name], bool):
                message = f"The field 'autocapture.{name}' must be true or false."
                raise ApiError(422, "invalid_field", message, field=f"autocapture.{name}")
            values[column(name)] = raw[name]
    if "file_download_extensions" in raw:
        given = raw["file_download_extensions"]
        extensions = DEFAULT_EXTENSIONS if given is None else check_extensions(given)
        values["file_download_extensions"] = (
            None if extensions == DEFAULT_EXTENSIONS else ",".join(extensions)
        )
    return values
