"""Open a database SPEC as a Hypothesis example database.

A SPEC is either a `redis://host:port/db` (or `rediss://`) URL, opened as Hypothesis'
`RedisExampleDatabase` so workers on many machines share one corpus, or a directory path,
opened as a `DirectoryBasedExampleDatabase`. The default directory is the project's local
Hypothesis database, `.hypothesis/examples`, so a plain `pytest` run replays what a session
found on the same machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

from invariants.user_errors import UserError

DEFAULT_DIRECTORY = Path(".hypothesis") / "examples"
REDIS_SCHEMES = ("redis", "rediss", "unix")


class DatabaseSpecError(UserError, ValueError):
    """A database SPEC that cannot be opened; the message names the SPEC."""


class DatabaseLost(DatabaseSpecError):
    """A Redis server that answered at the start stopped answering: an error of the
    environment (exit 2), never a failure the session found."""


def is_redis_url(spec: str) -> bool:
    return urlsplit(spec).scheme in REDIS_SCHEMES


def open_database(spec: str | None = None) -> ExampleDatabase:
    """The example database a SPEC names (the default directory when `spec` is empty)."""
    if not spec:
        return DirectoryBasedExampleDatabase(DEFAULT_DIRECTORY.resolve())
    if is_redis_url(spec):
        return _open_redis(spec)
    if "://" in spec:
        raise DatabaseSpecError(
            f"database {spec!r}: unsupported URL scheme (use redis://host:port/db or a directory)"
        )
    path = Path(spec).expanduser()
    if path.exists() and not path.is_dir():
        raise DatabaseSpecError(f"database {spec!r}: exists and is not a directory")
    return DirectoryBasedExampleDatabase(path.resolve())


def normalise_spec(spec: str | None) -> str:
    """The SPEC as every worker must see it: a directory made absolute (workers run in the
    session directory), a URL unchanged."""
    if spec and "://" in spec:
        return spec
    return str((Path(spec).expanduser() if spec else DEFAULT_DIRECTORY).resolve())


def _open_redis(url: str) -> ExampleDatabase:
    try:
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase
    except ImportError:
        raise DatabaseSpecError(
            f"database {url!r}: the redis client is not installed "
            "(pip install 'mesh-harness[fuzz]')"
        ) from None
    try:
        client = redis.Redis.from_url(url)
    except ValueError as exc:
        raise DatabaseSpecError(f"database {url!r}: {exc}") from None
    return RedisExampleDatabase(client)


def check_reachable(database: ExampleDatabase, spec: str) -> None:
    """Fail early, with the SPEC named, when a Redis server does not answer."""
    client = getattr(database, "redis", None)
    if client is None:
        return
    try:
        client.ping()
    except Exception as exc:  # the client raises several connection error types
        raise DatabaseSpecError(f"database {spec!r}: cannot reach the server ({exc})") from None


def describe(spec: str | None) -> str:
    if not spec:
        return f"{DEFAULT_DIRECTORY} (default)"
    return spec


def guarded(database: ExampleDatabase, spec: str) -> ExampleDatabase:
    """`database`, each Redis connection error it raises a `DatabaseLost` naming `spec`
    (a directory database is returned as it is)."""
    if getattr(database, "redis", None) is None:
        return database
    return _Guarded(database, spec)


class _Guarded(ExampleDatabase):
    def __init__(self, inner: ExampleDatabase, spec: str) -> None:
        super().__init__()
        self._inner = inner
        self._spec = spec

    @contextmanager
    def _answering(self) -> Iterator[None]:
        import redis

        try:
            yield
        except (redis.exceptions.RedisError, OSError) as exc:
            raise DatabaseLost(f"database {self._spec!r}: the server stopped answering "
                               f"({exc})") from None

    def fetch(self, key: bytes) -> Iterable[bytes]:
        with self._answering():
            return list(self._inner.fetch(key))  # read here, where its errors are caught

    def save(self, key: bytes, value: bytes) -> None:
        with self._answering():
            self._inner.save(key, value)

    def delete(self, key: bytes, value: bytes) -> None:
        with self._answering():
            self._inner.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        with self._answering():
            self._inner.move(src, dest, value)
