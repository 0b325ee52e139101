"""Chunks as objects of an S3-compatible bucket (Amazon S3, MinIO, Ceph, Garage, R2, ...) via boto3.

Keys follow the directory layout, ``PREFIX<id[:2]>/<id>/<seq>.json.gz``, so a backup looks the
same whichever store it came from. ``put`` is one PutObject with the body's MD5 (the store
refuses a body damaged on the way); S3 answers only once the object is stored durably, so the
index row committed after it never names a lost chunk. Deleting a recording lists its keys and
removes them in batches (DeleteObjects). Credentials come from boto3's usual chain (the
``AWS_*`` environment variables, ``AWS_PROFILE``, the machine's role), never from the URL.

Every failure to reach or use the bucket becomes ``StorageUnavailableError``, naming the problem
and the fix (a missing bucket, refused credentials, an endpoint that does not answer): ingest
answers 503 with Retry-After, so the recorder sends the chunk again later, and health shows
the ``recordings`` service down with those words.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError

from sightline.locations import Bucket
from sightline.recordings.store import (
    CHUNK_NAME,
    RECORDING_ID,
    ChunkMissingError,
    StorageUnavailableError,
    chunk_name,
)

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

DELETE_BATCH = 1000  # DeleteObjects takes at most 1000 keys
MISSING = {"NoSuchKey", "404", "NotFound"}
NO_BUCKET = {"NoSuchBucket"}
DENIED = {"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403", "Forbidden"}
CREDENTIALS_FIX = (
    "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) for the Sightline service "
    "to a key that may read, write, list and delete objects in the bucket, then restart it."
)


def _client(place: Bucket, *, connect: float, read: float, attempts: int) -> S3Client:
    style: Literal["path", "virtual"] = "path" if place.addressing_style == "path" else "virtual"
    config = Config(
        region_name=place.region,
        connect_timeout=connect,
        read_timeout=read,
        retries={"max_attempts": attempts, "mode": "standard"},
        max_pool_connections=48,  # the server's worker threads
        s3={"addressing_style": style},
        # Checksums only where S3 requires them: several S3-compatible stores refuse the newer
        # trailing checksums; every body carries its Content-MD5 instead.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    session = boto3.session.Session()
    client: S3Client = session.client("s3", endpoint_url=place.endpoint, config=config)
    return client


class S3ChunkStore:
    kind = "s3"

    def __init__(self, place: Bucket) -> None:
        self.place = place
        self.bucket = place.bucket
        self.prefix = place.prefix
        self.location = place.url
        self.client = _client(place, connect=5, read=30, attempts=3)
        self.prober = _client(place, connect=2, read=5, attempts=1)  # health answers quickly

    def folder(self, recording_id: str) -> str:
        if not RECORDING_ID.match(recording_id):
            raise ValueError("not a recording id")
        return f"{self.prefix}{recording_id[:2]}/{recording_id}/"

    def key(self, recording_id: str, seq: int) -> str:
        return self.folder(recording_id) + chunk_name(seq)

    def put(self, recording_id: str, seq: int, data: bytes) -> None:
        digest = base64.b64encode(hashlib.md5(data, usedforsecurity=False).digest()).decode()
        with self._failures("store a chunk"):
            self.client.put_object(
                Bucket=self.bucket,
                Key=self.key(recording_id, seq),
                Body=data,
                ContentMD5=digest,
                ContentType="application/gzip",
            )

    def get(self, recording_id: str, seq: int) -> bytes:
        try:
            with self._failures("read a chunk"):
                answer = self.client.get_object(Bucket=self.bucket, Key=self.key(recording_id, seq))
                body = answer["Body"]
                try:
                    return body.read()
                finally:
                    body.close()
        except _MissingError:
            raise ChunkMissingError(f"{recording_id}/{seq}") from None

    def delete_recording(self, recording_id: str) -> None:
        keys = [key for key, _ in self._objects(self.folder(recording_id))]
        for start in range(0, len(keys), DELETE_BATCH):
            batch: list[ObjectIdentifierTypeDef] = [
                {"Key": key} for key in keys[start : start + DELETE_BATCH]
            ]
            with self._failures("delete a recording"):
                answer = self.client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
                )
            errors = answer.get("Errors") or []
            if errors:
                first = errors[0]
                raise StorageUnavailableError(
                    "delete_failed",
                    f"The bucket refused to delete {len(errors)} objects of recording {recording_id} "
                    f"({first.get('Code')}: {first.get('Message')}).",
                    CREDENTIALS_FIX,
                )

    def delete_chunk(self, recording_id: str, seq: int) -> None:
        with self._failures("delete a chunk"):
            self.client.delete_object(Bucket=self.bucket, Key=self.key(recording_id, seq))

    def recording_ids(self) -> Iterator[str]:
        for shard in self._folders(self.prefix):
            for folder in self._folders(shard):
                name = folder[len(shard) :].rstrip("/")
                if RECORDING_ID.match(name):
                    yield name

    def modified(self, recording_id: str) -> float | None:
        times = [when for _, when in self._objects(self.folder(recording_id))]
        return max(times) if times else None

    def seqs(self, recording_id: str) -> list[int]:
        folder = self.folder(recording_id)
        found = [CHUNK_NAME.match(key[len(folder) :]) for key, _ in self._objects(folder)]
        return sorted(int(m.group(1)) for m in found if m)

    def check(self) -> dict[str, object]:
        """HeadBucket: the bucket exists and these credentials may use it."""
        with self._failures("check the bucket"):
            self.prober.head_bucket(Bucket=self.bucket)
        return {"bucket": self.bucket, "endpoint": self.place.endpoint or "Amazon S3"}

    # Listing -----------------------------------------------------------------------------------

    def _folders(self, prefix: str) -> Iterator[str]:
        pages = self.client.get_paginator("list_objects_v2")
        with self._failures("list the bucket"):
            for page in pages.paginate(Bucket=self.bucket, Prefix=prefix, Delimiter="/"):
                for common in page.get("CommonPrefixes") or []:
                    if "Prefix" in common:
                        yield common["Prefix"]

    def _objects(self, prefix: str) -> Iterator[tuple[str, float]]:
        pages = self.client.get_paginator("list_objects_v2")
        with self._failures("list the bucket"):
            for page in pages.paginate(Bucket=self.bucket, Prefix=prefix):
                for item in page.get("Contents") or []:
                    if "Key" in item and "LastModified" in item:
                        yield item["Key"], item["LastModified"].timestamp()

    @contextmanager
    def _failures(self, action: str) -> Iterator[None]:
        """boto3's errors as ``StorageUnavailableError``, with the problem and the fix."""
        try:
            yield
        except (BotoCoreError, ClientError) as error:
            raise translate(self.place, action, error) from None


class _MissingError(Exception):
    """GetObject found no such key."""


def translate(place: Bucket, action: str, error: BotoCoreError | ClientError) -> Exception:
    where = f"{place.url} at {place.endpoint or 'Amazon S3'}"
    if isinstance(error, NoCredentialsError | PartialCredentialsError):
        return StorageUnavailableError(
            "no_credentials", f"No credentials for the recordings bucket {where}.", CREDENTIALS_FIX
        )
    if isinstance(error, ClientError):
        code = str(error.response.get("Error", {}).get("Code", ""))
        if code in MISSING and action == "read a chunk":
            return _MissingError()
        if code in NO_BUCKET or (code in MISSING and action == "check the bucket"):
            return StorageUnavailableError(
                "no_bucket",
                f"The recordings bucket {place.bucket!r} does not exist at {place.endpoint or 'Amazon S3'}.",
                "Create the bucket (or correct --recordings-url); Sightline does not create it.",
            )
        if code in DENIED:
            return StorageUnavailableError(
                "access_denied",
                f"The recordings bucket {where} refused Sightline's credentials ({code}).",
                CREDENTIALS_FIX,
            )
        return StorageUnavailableError(
            "refused",
            f"The recordings bucket {where} answered {code or 'an error'} when asked to {action}.",
            "Check the object store's own logs and status; Sightline tries again with every chunk.",
        )
    return StorageUnavailableError(
        "unreachable",
        f"The recordings bucket {where} could not be reached ({type(error).__name__}) when Sightline "
        f"tried to {action}.",
        "Check that the object store runs and that this node reaches the endpoint (address, port, "
        "TLS, firewall). Recorders send their chunks again once it answers.",
    )
