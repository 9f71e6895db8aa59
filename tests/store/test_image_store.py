"""Images in S3-compatible object storage (`--image-store s3://BUCKET/PREFIX`), against moto's S3 on
127.0.0.1: an import puts each real image once under its hash, a second replica (its own image
folder, nothing copied by hand) reads them, exports carry them, and a missing bucket or refused
credentials are said with what and where while nothing is stored."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from services import data, exports
from services.access import OPERATOR
from store import Store
from store.datasets import get_dataset
from store.images import image_path
from store.items import get_item, item_ids, items_frame, items_frames
from store.objects import ImageStorageError
from tests.browser_support import app_py
from tests.conftest import MATHVISTA_DIR
from tests.s3_support import S3Server, s3_server

BUCKET = "stepgate-images"
STORAGE = f"s3://{BUCKET}/team-a"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with s3_server() as server:
        server.bucket(BUCKET)
        yield server


def gate_file(folder: Path, n: int = 3) -> tuple[Path, dict[str, bytes]]:
    """CRYSTAL-style records over real MathVista figures; returns the file and each image's bytes by hash."""
    pictures = sorted(MATHVISTA_DIR.glob("*.png"))[:n]
    (folder / "images").mkdir(parents=True, exist_ok=True)
    lines, by_hash = [], {}
    for i, picture in enumerate(pictures):
        shutil.copyfile(picture, folder / "images" / picture.name)
        by_hash[hashlib.sha256(picture.read_bytes()).hexdigest()] = picture.read_bytes()
        record = {
            "id": f"fig-{i}",
            "question": f"What does figure {i} show?",
            "image": f"images/{picture.name}",
        }
        lines.append(json.dumps({**record, "answer": "A", "steps": ["Look at the figure.", "It shows A."]}))
    path = folder / "gate.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, by_hash


def test_an_import_puts_each_image_once_in_the_bucket_under_its_hash(s3: S3Server, tmp_path: Path) -> None:
    source, by_hash = gate_file(tmp_path / "src")
    with Store(tmp_path / "a.duckdb", images=STORAGE) as store:
        data.import_file(store, OPERATOR, source, format="crystal", dataset="figures")
        data.import_file(store, OPERATOR, source, format="crystal", dataset="figures-again")
    stored = s3.objects(BUCKET, "team-a/")
    assert {key.rsplit("/", 1)[-1].split(".")[0] for key in stored} == set(by_hash)
    assert len(stored) == len(by_hash)  # two datasets, one object per picture
    for key, body in stored.items():
        digest = key.rsplit("/", 1)[-1].split(".")[0]
        assert key == f"team-a/{digest[:2]}/{digest}.png" and body == by_hash[digest]


def imported_on_replica_1(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A database whose figures one replica imported into the bucket; its image folder is its own."""
    source, by_hash = gate_file(tmp_path / "src")
    db = tmp_path / "shared.duckdb"
    with Store(db, data_dir=tmp_path / "replica-1", images=STORAGE) as store:
        data.import_file(store, OPERATOR, source, format="crystal", dataset="figures")
    return db, by_hash


def test_a_second_replica_reads_the_images_from_the_bucket(s3: S3Server, tmp_path: Path) -> None:
    db, by_hash = imported_on_replica_1(tmp_path)
    # Another machine: its own (empty) image folder, the same database and bucket.
    with Store(db, data_dir=tmp_path / "replica-2", images=STORAGE) as replica:
        assert not (tmp_path / "replica-2" / "images").exists() or not any(
            (tmp_path / "replica-2" / "images").rglob("*.png")
        )
        found = get_dataset(replica, "figures")
        assert found is not None
        shown = [get_item(replica, item_id).image_paths for item_id in item_ids(replica, found.id)]
    files = [Path(p) for paths in shown for p in paths]
    assert len(files) == len(by_hash)
    for path in files:
        assert path.is_relative_to(tmp_path / "replica-2" / "images")  # the folder Gradio serves
        assert by_hash[hashlib.sha256(path.read_bytes()).hexdigest()] == path.read_bytes()


def test_exports_from_a_fresh_replica_carry_the_images(s3: S3Server, tmp_path: Path) -> None:
    db, by_hash = imported_on_replica_1(tmp_path)
    with Store(db, data_dir=tmp_path / "replica-2", images=STORAGE) as replica:
        # What the benchmark formats copy beside their file: the items' frames, whole or in chunks.
        for frame in (*items_frames(replica, rows=1), items_frame(replica)):
            for files in frame["image_files"]:
                assert [by_hash[hashlib.sha256(Path(f).read_bytes()).hexdigest()] for f in files]
        out = tmp_path / "out" / "bundle.jsonl"
        out.parent.mkdir()
        exports.export(replica, "stepgate-jsonl", out, images="paths")
        embedded = tmp_path / "out" / "embedded.jsonl"
        exports.export(replica, "stepgate-jsonl", embedded)
    copied = {
        hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "out" / "bundle-images").iterdir()
    }
    assert copied == set(by_hash)
    lines = [json.loads(line) for line in embedded.read_text(encoding="utf-8").splitlines()]
    assert {line["sha256"] for line in lines if line.get("kind") == "image"} == set(by_hash)
    # The bundle goes back into a store whose images are in a folder: the same pictures.
    with Store(tmp_path / "copy.duckdb") as copy:
        data.import_file(copy, OPERATOR, out)
        assert {
            p.name.split(".")[0] for p in (tmp_path / "copy.duckdb.files" / "images").rglob("*.png")
        } == set(by_hash)


def test_a_missing_bucket_is_named_when_the_store_opens(s3: S3Server, tmp_path: Path) -> None:
    with pytest.raises(ImageStorageError) as refused:
        Store(tmp_path / "a.duckdb", images="s3://no-such-bucket/x")
    message = str(refused.value)
    assert "no-such-bucket" in message and s3.endpoint in message and "does not exist" in message


def test_a_bucket_gone_mid_run_fails_the_import_whole(s3: S3Server, tmp_path: Path) -> None:
    source, _ = gate_file(tmp_path / "src")
    s3.bucket("short-lived")
    with Store(tmp_path / "a.duckdb", images="s3://short-lived/p") as store:
        s3.client().delete_bucket(Bucket="short-lived")
        with pytest.raises(ImageStorageError) as refused:
            data.import_file(store, OPERATOR, source, format="crystal", dataset="figures")
        assert "short-lived" in str(refused.value) and "does not exist" in str(refused.value)
        assert get_dataset(store, "figures") is None
        assert store.scalar("SELECT count(*) FROM images") == 0
        assert store.scalar("SELECT count(*) FROM items") == 0


def test_refused_credentials_are_said_and_nothing_is_stored(s3: S3Server, tmp_path: Path) -> None:
    source, _ = gate_file(tmp_path / "src")
    with Store(tmp_path / "a.duckdb", images="s3://stepgate-images/refused") as store:
        s3.enforce_credentials(True)  # from now on moto knows no key: ours is refused
        try:
            with pytest.raises(ImageStorageError) as refused:
                data.import_file(store, OPERATOR, source, format="crystal", dataset="figures")
            with pytest.raises(ImageStorageError) as at_open:
                Store(tmp_path / "b.duckdb", images="s3://stepgate-images/refused")
        finally:
            s3.enforce_credentials(False)
        for message in (str(refused.value), str(at_open.value)):
            assert "credentials were refused" in message and "s3://stepgate-images/refused" in message
            assert s3.endpoint in message
        assert get_dataset(store, "figures") is None
        assert store.scalar("SELECT count(*) FROM images") == 0
    assert s3.objects(BUCKET, "refused/") == {}


def test_an_address_that_is_not_s3_is_refused_with_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(ImageStorageError, match="s3://BUCKET/PREFIX"):
        Store(tmp_path / "a.duckdb", images="gs://bucket")


def test_the_command_line_says_which_bucket_is_missing_and_stores_nothing(
    s3: S3Server, tmp_path: Path
) -> None:
    source, _ = gate_file(tmp_path / "src")
    db = tmp_path / "cli.duckdb"
    result = app_py(
        "import", str(source), "--db", str(db), "--image-store", "s3://missing-bucket/p", timeout=120
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert (
        "missing-bucket" in result.stderr
        and s3.endpoint in result.stderr
        and "does not exist" in result.stderr
    )
    with Store(db) as store:
        assert store.scalar("SELECT count(*) FROM items") == 0


def test_two_replicas_over_postgresql_share_the_bucket_at_once(
    s3: S3Server, postgres_url: str, tmp_path: Path
) -> None:
    """Both open together, each with its own image folder: what one imports, the other shows."""
    source, by_hash = gate_file(tmp_path / "src")
    with (
        Store(postgres_url, data_dir=tmp_path / "r1", images=STORAGE) as one,
        Store(postgres_url, data_dir=tmp_path / "r2", images=STORAGE) as two,
    ):
        data.import_file(one, OPERATOR, source, format="crystal", dataset="figures")
        found = get_dataset(two, "figures")
        assert found is not None
        shown = [Path(p) for i in item_ids(two, found.id) for p in get_item(two, i).image_paths]
    assert {hashlib.sha256(p.read_bytes()).hexdigest() for p in shown} == set(by_hash)
    assert all(p.is_relative_to(tmp_path / "r2" / "images") for p in shown)


def test_an_object_changed_in_the_bucket_is_never_shown_as_the_image(s3: S3Server, tmp_path: Path) -> None:
    db, by_hash = imported_on_replica_1(tmp_path)
    digest = sorted(by_hash)[0]
    key = f"team-a/{digest[:2]}/{digest}.png"
    original = s3.objects(BUCKET, key)[key]
    s3.client().put_object(Bucket=BUCKET, Key=key, Body=original[:-10] + b"tampered!!")
    try:
        with Store(db, data_dir=tmp_path / "replica-2", images=STORAGE) as replica:
            with pytest.raises(ImageStorageError, match="does not match its SHA-256"):
                image_path(replica, digest)
            assert not list((tmp_path / "replica-2" / "images").rglob("*.png"))
    finally:
        s3.client().put_object(Bucket=BUCKET, Key=key, Body=original)


def test_a_key_allowed_objects_but_not_listing_still_stores_and_reads(s3: S3Server, tmp_path: Path) -> None:
    """The policy many teams give an app: get and put under its prefix, nothing else (on AWS a
    missing key then answers 403, not 404; the store takes that as "not there yet" and puts)."""
    import boto3
    from botocore.exceptions import ClientError

    iam = boto3.client("iam", endpoint_url=s3.endpoint, region_name="us-east-1")
    iam.create_user(UserName="stepgate-app")
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:PutObject"],
                "Resource": f"arn:aws:s3:::{BUCKET}/narrow/*",
            }
        ],
    }
    iam.put_user_policy(UserName="stepgate-app", PolicyName="images", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="stepgate-app")["AccessKey"]
    source, by_hash = gate_file(tmp_path / "src")
    saved = {k: os.environ[k] for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update(AWS_ACCESS_KEY_ID=key["AccessKeyId"], AWS_SECRET_ACCESS_KEY=key["SecretAccessKey"])
    s3.enforce_credentials(True)
    try:
        narrow = s3.client(key=key["AccessKeyId"], secret=key["SecretAccessKey"])
        for refused in (  # the policy holds: nothing but objects under its prefix (no HeadBucket either)
            lambda: narrow.put_object(Bucket=BUCKET, Key="elsewhere/x.png", Body=b"x"),
            lambda: narrow.head_bucket(Bucket=BUCKET),
        ):
            with pytest.raises(ClientError, match=r"AccessDenied|403"):
                refused()
        db = tmp_path / "narrow.duckdb"
        with Store(db, data_dir=tmp_path / "r1", images=f"s3://{BUCKET}/narrow") as store:
            data.import_file(store, OPERATOR, source, format="crystal", dataset="figures")
        with Store(db, data_dir=tmp_path / "r2", images=f"s3://{BUCKET}/narrow") as replica:
            found = get_dataset(replica, "figures")
            assert found is not None
            shown = [Path(p) for i in item_ids(replica, found.id) for p in get_item(replica, i).image_paths]
    finally:
        s3.enforce_credentials(False)
        os.environ.update(saved)
    assert {hashlib.sha256(p.read_bytes()).hexdigest() for p in shown} == set(by_hash)
