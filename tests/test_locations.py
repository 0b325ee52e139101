"""``--recordings-url``: a directory or an S3-compatible bucket, and clear refusals of anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from sightline.locations import Bucket, Directory, parse
from sightline.settings import BY_NAME, SettingsError, load


def test_no_url_means_the_data_directory_and_a_path_or_file_url_means_that_directory() -> None:
    assert parse(None) == Directory()
    assert parse("  ") == Directory()
    assert Directory().root(Path("/var/lib/sightline")) == Path("/var/lib/sightline/recordings")
    assert parse("/mnt/shared/recordings") == Directory(Path("/mnt/shared/recordings"))
    assert parse("file:///mnt/shared/recordings") == Directory(Path("/mnt/shared/recordings"))


def test_an_s3_url_names_the_bucket_prefix_endpoint_region_and_addressing() -> None:
    place = parse("s3://sightline-eu/prod/recordings?endpoint=https://minio.internal:9000/&region=eu-west-1")
    assert place == Bucket("sightline-eu", "prod/recordings/", "https://minio.internal:9000", "eu-west-1")
    assert isinstance(place, Bucket)
    assert place.url == "s3://sightline-eu/prod/recordings/"
    assert place.addressing_style == "path"  # a self-hosted store's usual style
    amazon = parse("s3://sightline-eu")
    assert amazon == Bucket("sightline-eu")
    assert isinstance(amazon, Bucket)
    assert amazon.addressing_style == "virtual"
    virtual = parse("s3://b-1/x?endpoint=https://s3.example.com&addressing=virtual")
    assert isinstance(virtual, Bucket)
    assert virtual.addressing_style == "virtual"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("s3://KEY:SECRET@bucket/x", "keep credentials out of the URL"),
        ("s3://Bad_Bucket", "is not a bucket name"),
        ("s3://ab", "is not a bucket name"),
        ("s3://bucket/a/../b", "the prefix part '..'"),
        ("s3://bucket/x?endpoint=ftp://host", "endpoint is the store's address"),
        ("s3://bucket/x?endpoint=https://host/path", "endpoint is an origin only"),
        ("s3://bucket/x?region=Europe West", "is not a region name"),
        ("s3://bucket/x?addressing=dns", "addressing is path, virtual or auto"),
        ("s3://bucket/x?secret=1", "unknown option 'secret'"),
        ("gs://bucket/x", "the recordings URL is empty"),
        ("relative/dir", "the recordings URL is empty"),
        ("file://host/dir", "file:///absolute/path"),
    ],
)
def test_a_wrong_recordings_url_is_refused_naming_the_setting_and_the_mistake(url: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse(url)
    assert says in str(raised.value)
    with pytest.raises(SettingsError) as from_env:
        load(environ={"SIGHTLINE_RECORDINGS_URL": url})
    assert str(from_env.value).startswith("SIGHTLINE_RECORDINGS_URL: ")
    assert says in str(from_env.value)


def test_the_recordings_url_is_a_setting_of_the_commands_that_touch_recordings() -> None:
    settings = load({"recordings_url": "s3://bucket/x?endpoint=http://127.0.0.1:9000"})
    assert settings.recordings_url == "s3://bucket/x?endpoint=http://127.0.0.1:9000"
    assert load(environ={}).recordings_url is None
    assert BY_NAME["recordings_url"].commands == ("serve", "backup", "restore", "erase-visitor")
