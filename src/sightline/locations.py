"""Where recordings live: ``--recordings-url`` read into a ``Directory`` or a ``Bucket``.

- empty: the directory ``DATA_DIR/recordings`` (the default);
- ``file:///mnt/shared/recordings`` or ``/mnt/shared/recordings``: a directory, which several
  nodes may share on a network file system;
- ``s3://BUCKET[/PREFIX][?endpoint=URL&region=NAME&addressing=path|virtual]``: an S3-compatible
  object store. Credentials never go in the URL: they come from the usual environment variables
  (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_PROFILE``) or the
  machine's role, as every S3 tool reads them.

``settings`` checks the value with ``parse`` when it loads; ``recordings.feature`` opens the
place it names. Imports nothing from the rest of Sightline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

BUCKET_NAME = re.compile(r"\A[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\Z")
REGION = re.compile(r"\A[a-z0-9-]{1,40}\Z")
PREFIX_PART = re.compile(r"\A[A-Za-z0-9._=-]{1,200}\Z")
OPTIONS = ("endpoint", "region", "addressing")
EXAMPLE = "s3://BUCKET/PREFIX?endpoint=https://s3.example.com&region=eu-west-1"


@dataclass(frozen=True)
class Directory:
    """Chunk files under ``path`` (None: ``DATA_DIR/recordings``)."""

    path: Path | None = None

    def root(self, data_dir: Path) -> Path:
        return self.path if self.path is not None else data_dir / "recordings"


@dataclass(frozen=True)
class Bucket:
    """Chunk objects under ``prefix`` (empty or ending in ``/``) of an S3-compatible bucket."""

    bucket: str
    prefix: str = ""
    endpoint: str | None = None  # None: Amazon S3 of ``region``
    region: str | None = None  # None: AWS_REGION / AWS_DEFAULT_REGION, else us-east-1
    addressing: str = "auto"  # path (most self-hosted stores), virtual (AWS), auto: by endpoint

    @property
    def url(self) -> str:
        """The place without its options, as health and logs name it."""
        return f"s3://{self.bucket}/{self.prefix}"

    @property
    def addressing_style(self) -> str:
        if self.addressing != "auto":
            return self.addressing
        return "path" if self.endpoint else "virtual"


def parse(raw: str | None) -> Directory | Bucket:
    """The place ``raw`` names; ``ValueError`` with a message an operator can act on."""
    value = (raw or "").strip()
    if not value:
        return Directory()
    if value.startswith("/"):
        return Directory(Path(value))
    parts = urlsplit(value)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise ValueError("a directory is file:///absolute/path (or the absolute path alone)")
        return Directory(Path(parts.path))
    if scheme != "s3":
        raise ValueError(f"the recordings URL is empty (DATA_DIR/recordings), file:///path or {EXAMPLE}")
    if "@" in parts.netloc:
        raise ValueError(
            "keep credentials out of the URL: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "in the environment instead"
        )
    bucket = parts.netloc
    if not BUCKET_NAME.match(bucket) or ".." in bucket:
        raise ValueError(f"{bucket!r} is not a bucket name (3 to 63 of a-z, 0-9, '.', '-'): {EXAMPLE}")
    segments = [s for s in parts.path.split("/") if s]
    for segment in segments:
        if not PREFIX_PART.match(segment) or segment in (".", ".."):
            raise ValueError(f"the prefix part {segment!r} may hold only A-Z, a-z, 0-9, '.', '_', '=', '-'")
    prefix = "".join(s + "/" for s in segments)
    options: dict[str, str] = {}
    for key, item in parse_qsl(parts.query, keep_blank_values=True):
        if key not in OPTIONS:
            raise ValueError(f"unknown option {key!r}; the options are {', '.join(OPTIONS)}")
        options[key] = item.strip()
    endpoint = options.get("endpoint") or None
    if endpoint is not None:
        address = urlsplit(endpoint)
        if address.scheme not in ("http", "https") or not address.hostname or address.username:
            raise ValueError("endpoint is the store's address, such as https://s3.example.com:9000")
        if address.path not in ("", "/") or address.query or address.fragment:
            raise ValueError("endpoint is an origin only (scheme, host, port); the prefix goes in the path")
        endpoint = f"{address.scheme}://{address.netloc}"
    region = options.get("region") or None
    if region is not None and not REGION.match(region):
        raise ValueError(f"{region!r} is not a region name such as eu-west-1")
    addressing = options.get("addressing") or "auto"
    if addressing not in ("auto", "path", "virtual"):
        raise ValueError("addressing is path, virtual or auto")
    return Bucket(bucket, prefix, endpoint, region, addressing)
