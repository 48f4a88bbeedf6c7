"""Database SPECs: a directory or a Redis URL, and a clear error naming a bad one."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="needs the fuzz extra: pip install -e '.[fuzz]'")
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.extra.redis import RedisExampleDatabase

from invariants.dynamic.database import (
    DEFAULT_DIRECTORY,
    DatabaseSpecError,
    check_reachable,
    normalise_spec,
    open_database,
)


def test_a_directory_spec_opens_a_directory_database(tmp_path: Path) -> None:
    database = open_database(str(tmp_path / "db"))
    assert isinstance(database, DirectoryBasedExampleDatabase)
    database.save(b"key", b"value")
    assert list(open_database(str(tmp_path / "db")).fetch(b"key")) == [b"value"]


def test_the_default_is_the_local_hypothesis_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert normalise_spec(None) == str(tmp_path / DEFAULT_DIRECTORY)
    assert normalise_spec("rel/db") == str(tmp_path / "rel" / "db")
    assert normalise_spec("redis://127.0.0.1:6379/3") == "redis://127.0.0.1:6379/3"


def test_a_redis_url_opens_a_redis_database() -> None:
    database = open_database("redis://127.0.0.1:6379/2")
    assert isinstance(database, RedisExampleDatabase)
    kwargs = database.redis.connection_pool.connection_kwargs
    assert (kwargs["host"], kwargs["port"], kwargs["db"]) == ("127.0.0.1", 6379, 2)
    database.redis.close()


def test_a_file_is_not_a_database_directory(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(DatabaseSpecError, match=r"notes\.txt.*not a directory"):
        open_database(str(path))


def test_an_unknown_scheme_is_named() -> None:
    expected = re.escape("'ftp://host/db': unsupported URL scheme")
    with pytest.raises(DatabaseSpecError, match=expected):
        open_database("ftp://host/db")


def test_a_bad_redis_url_is_named() -> None:
    with pytest.raises(DatabaseSpecError, match=re.escape("redis://127.0.0.1:notaport")):
        open_database("redis://127.0.0.1:notaport/0")


def test_an_unreachable_server_is_reported_with_its_spec() -> None:
    with socket.socket() as probe:  # a port nothing listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = f"redis://127.0.0.1:{port}/0"
    database = open_database(spec)
    with pytest.raises(DatabaseSpecError, match=re.escape(spec) + ".*cannot reach the server"):
        check_reachable(database, spec)
    database.redis.close()


def test_a_live_server_is_reachable(redis_url: str) -> None:
    database = open_database(redis_url)
    check_reachable(database, redis_url)  # raises if the server does not answer
    database.save(b"k", b"v")
    assert list(database.fetch(b"k")) == [b"v"]
    database.redis.close()
