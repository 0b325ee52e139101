"""An S3-compatible object store for the tests: moto's server on a kernel-assigned loopback port.

It stands in for Amazon S3 or a self-hosted MinIO, which are services on the network: it speaks
the S3 HTTP API, so Sightline's servers (other processes) reach it with boto3 exactly as they
would reach the real thing. One server per test session; each test makes its own bucket.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

ACCESS_KEY = "sightline-test-key"
SECRET_KEY = "sightline-test-secret"  # moto accepts any key; a real store would check it
REGION = "us-east-1"


class ObjectStore:
    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer  # loaded only by the tests that use it

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.endpoint = ""

    def start(self) -> ObjectStore:
        self.server.start()
        _, port = self.server.get_host_and_port()
        self.endpoint = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self.server.stop()

    def env(self) -> dict[str, str]:
        """The usual AWS variables for a Sightline process, and nothing read from this machine."""
        nowhere = str(Path("/nonexistent/sightline-tests"))
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": nowhere,
            "AWS_SHARED_CREDENTIALS_FILE": nowhere,
        }

    def client(self) -> S3Client:
        import boto3  # here: every worker's collection imports this module, few tests use a client
        from botocore.config import Config

        client: S3Client = boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
            config=Config(s3={"addressing_style": "path"}),
        )
        return client

    def create_bucket(self) -> str:
        name = f"recordings-{secrets.token_hex(6)}"
        self.client().create_bucket(Bucket=name)
        return name

    def url(self, bucket: str, prefix: str = "sightline") -> str:
        """``--recordings-url`` for the bucket."""
        return f"s3://{bucket}/{prefix}?endpoint={self.endpoint}&region={REGION}"

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []) if "Key" in item)
