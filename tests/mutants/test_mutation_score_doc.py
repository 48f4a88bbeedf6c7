"""docs/mutation-score.md runs Cosmic Ray's HTTP workers safely: it says that a worker runs
whatever it is sent, every worker command it shows listens on 127.0.0.1 only (the worker
it shows is started and its listening sockets looked at), and the coordinator reaches the
workers on loopback addresses (the local ends of SSH tunnels)."""

from __future__ import annotations

import os
import re
import select
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness

DOC = Path(harness.__file__).resolve().parents[1] / "docs" / "mutation-score.md"
TEXT = DOC.read_text(encoding="utf-8")
COMMANDS = "\n".join(re.findall(r"```bash\n(.*?)```", TEXT, flags=re.DOTALL))


def test_the_security_note_is_there() -> None:
    note = " ".join(TEXT.split())
    assert "an HTTP worker runs whatever it is sent" in note
    assert "listens on every interface" in note
    assert "bind each worker to 127.0.0.1" in note


def test_the_commands_shown_listen_and_connect_on_loopback_only() -> None:
    assert "cosmic-ray http-worker" not in COMMANDS  # it would listen on every interface
    assert "cr-http-workers" not in COMMANDS
    urls = re.findall(r"--worker-url (\S+)", COMMANDS)
    assert urls and all(url.startswith("http://127.0.0.1:") for url in urls), urls
    for tunnel in re.findall(r"ssh -N -L (\S+)", COMMANDS):
        assert tunnel.startswith("127.0.0.1:") and ":127.0.0.1:" in tunnel, tunnel


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


RUNNING = b"======== Running on "  # what aiohttp's run_app prints once its sites listen


def _read_until(fd: int, marker: bytes, deadline: float) -> bytes:
    """What `fd` gives up to and with `marker`, or all it gave by its end or the deadline."""
    said = b""
    while marker not in said:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:  # the deadline passed, or the worker exited
            break
        said += chunk
    return said


def test_the_worker_shown_listens_on_127_0_0_1_only() -> None:
    pytest.importorskip("cosmic_ray", reason="needs the mutate extra")
    psutil = pytest.importorskip("psutil")
    (line,) = [w for w in COMMANDS.splitlines() if w.startswith("python -c ")]
    port = _free_port()
    argv = shlex.split(line.replace("port=9876", f"port={port}"))
    # Unbuffered: aiohttp's run_app prints its "Running on" line once every site listens.
    worker = subprocess.Popen([sys.executable, *argv[1:]], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert worker.stdout is not None
    try:
        said = _read_until(worker.stdout.fileno(), RUNNING, deadline=time.monotonic() + 60)
        assert RUNNING in said, f"the worker never said it listens; it said: {said!r}"
        listening = [c.laddr for c in psutil.Process(worker.pid).net_connections("tcp")
                     if c.status == psutil.CONN_LISTEN]
        assert listening, "the worker never listened"
        assert {(address.ip, address.port) for address in listening} == {("127.0.0.1", port)}
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        worker.stdout.close()
