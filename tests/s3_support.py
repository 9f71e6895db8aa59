"""A local S3 server for the image-storage tests: moto's ThreadedMotoServer on 127.0.0.1 (a fake of
S3, not of our store), with the standard AWS variables pointed at it as an operator would set them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import requests

from bench.server import free_port

__all__ = ["S3Server", "s3_server"]

KEYS = {"AWS_ACCESS_KEY_ID": "stepgate-test", "AWS_SECRET_ACCESS_KEY": "stepgate-test-secret"}


@dataclass
class S3Server:
    endpoint: str
    env: dict[str, str]

    def client(self, **credentials: str) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=credentials.get("key", KEYS["AWS_ACCESS_KEY_ID"]),
            aws_secret_access_key=credentials.get("secret", KEYS["AWS_SECRET_ACCESS_KEY"]),
        )

    def bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def objects(self, bucket: str, prefix: str = "") -> dict[str, bytes]:
        s3 = self.client()
        listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
        return {o["Key"]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}

    def enforce_credentials(self, on: bool) -> None:
        """moto checks access keys against its IAM only when told to: 0 free requests, or all free."""
        value = b"0" if on else b"inf"
        assert requests.post(f"{self.endpoint}/moto-api/reset-auth", data=value, timeout=10).ok


@contextmanager
def s3_server() -> Iterator[S3Server]:
    """moto's S3 on 127.0.0.1 and a free port; AWS_* set in os.environ (so app subprocesses inherit
    them) for the server's lifetime, then restored."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    # moto keeps its buckets in this process's memory, shared by every server it starts: a module's
    # server begins empty, whatever an earlier module stored.
    requests.post(f"{endpoint}/moto-api/reset", timeout=30).raise_for_status()
    env = {**KEYS, "AWS_ENDPOINT_URL": endpoint, "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield S3Server(endpoint, env)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        server.stop()
