"""Fixtures for the fuzzing-session tests: a real Redis server of their own.

The server listens on a free loopback port with its data in a temporary directory and is
ready once it prints that it accepts connections (read from its output, no polling).
The tests skip, saying why, only when no `redis-server` can be started on this machine.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

READY = b"Ready to accept connections"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "fuzz_session: runs real HypoFuzz sessions (tens of seconds each)"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def redis_server(data: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A `redis-server` of its own on a free loopback port, data in `data`: its URL and
    its process, ended on the way out; a skip when none can be started."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (.ci/run installs it with apt-get)")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data),
         "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    output: list[bytes] = []
    for line in process.stdout:  # ends when the server exits
        output.append(line)
        if READY in line:
            break
    else:
        process.wait()
        tail = b"".join(output[-5:]).decode(errors="replace")
        pytest.skip(f"redis-server could not start: {tail}")
    # Keep draining its output so a full pipe never blocks the server.
    drain = threading.Thread(target=process.stdout.read, daemon=True)
    drain.start()
    try:
        yield f"redis://127.0.0.1:{port}/0", process
    finally:
        process.terminate()
        process.wait()
        drain.join()
        process.stdout.close()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as (url, _process):
        yield url


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A server of this test's own, which the test may stop: its URL and its process."""
    data = tmp_path / "redis"
    data.mkdir()
    with redis_server(data) as served:
        yield served


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    return tmp_path / "session"
