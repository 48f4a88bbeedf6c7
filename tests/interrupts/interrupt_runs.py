"""Harness commands run as child processes, told what a terminal or a supervisor would tell them.

`repo(tmp_path)` writes a tiny repository whose mesh is the reference mesh behind the
adapter of `slowmesh` (below); `Command` starts a harness command in it (in a session of
its own, so that a signal to its group is what a terminal's Ctrl-C or hang-up is), reads
what the command and its mesh announce, signals it, and reports what came out and which of
the processes it had started still run. No wall-clock threshold decides anything here: the
tests wait for lines, and a deadline only stops a test that would otherwise hang.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_SECONDS = 120.0  # only ends a test whose command hangs; never a verdict

ANNOUNCE_ENV = "SLOWMESH_ANNOUNCE"  # a FIFO the adapter writes "<what> <pid>" lines to
MODE_ENV = "SLOWMESH_MODE"  # announce | block | block-in-worker

# The mesh: the reference mesh behind an adapter that, in a step the harness drives (the
# step budget's CPU timer is armed), says so once per process on the FIFO and, as
# SLOWMESH_MODE asks, then blocks until a signal ends the process or its handler raises
# (an interrupt, the step's wall budget): everywhere, or only in a pool worker of the
# process the test started. The conformance programs (no step budget) see the plain
# reference mesh.
ADAPTER = '''\
from __future__ import annotations

import multiprocessing
import os
import signal

from reference_impl.adapter import ReferenceAdapter

_SAID: set[int] = set()  # harness: allow[MESH005] MEMO: the pids that said so once


def _announce(what: str) -> None:
    path = os.environ.get("SLOWMESH_ANNOUNCE")
    if path and os.getpid() not in _SAID:
        _SAID.add(os.getpid())
        with open(path, "w", encoding="ascii") as fifo:
            fifo.write(f"{what} {os.getpid()}\\n")


class Slow(ReferenceAdapter):
    def advance(self, ms: int) -> None:
        if signal.getitimer(signal.ITIMER_PROF)[0] > 0:  # inside a step's budget
            mode = os.environ.get("SLOWMESH_MODE", "announce")
            in_worker = multiprocessing.parent_process() is not None
            if mode == "block" or (mode == "block-in-worker" and in_worker):
                _announce("blocked")
                while True:  # a signal whose handler returns (a deferred one) blocks on
                    signal.pause()
            _announce("stepping")
        super().advance(ms)


def make(chooser):
    return Slow(chooser)
'''

# Mutable figures of the mesh package (what `prove --mutate` mutates): unused by the
# adapter, so every mutant reaches the steps.
FIGURES = '''\
def scaled(value: int) -> int:
    return value * 2 + 1


def clamped(value: int, low: int, high: int) -> int:
    return max(low, min(high, value - 1))
'''

PYPROJECT = """\
[tool.harness]
paths = ["src"]
adapter = "slowmesh.adapter:make"
invariants = ["INV1"]
mutate_paths = ["src/slowmesh/figures.py"]
"""


def repo(root: Path) -> Path:
    package = root / "src" / "slowmesh"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "adapter.py").write_text(ADAPTER, encoding="utf-8")
    (package / "figures.py").write_text(FIGURES, encoding="utf-8")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return root


def big_tree(root: Path, files: int = 30, functions: int = 500) -> Path:
    """A tree that takes the parser seconds: a scan of it is still running when signalled."""
    source = "\n".join(
        f"def f{i}(x):\n    if x > {i}:\n        return [x * {i}, {{'k': x}}]\n    return None\n"
        for i in range(functions)
    )
    (root / "src").mkdir(parents=True, exist_ok=True)
    for n in range(files):
        (root / "src" / f"m{n}.py").write_text(source, encoding="utf-8")
    (root / "pyproject.toml").write_text('[tool.harness]\npaths = ["src"]\n', encoding="utf-8")
    return root


def children(pid: int) -> list[int]:
    found: list[int] = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(n) for n in listing.read_text(encoding="ascii").split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        frontier = [c for p in frontier for c in children(p) if c not in found]
        found.update(frontier)
    return found


def running(pid: int) -> bool:
    """Still running (not exited, not a zombie awaiting its reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] not in ("Z", "X")


@dataclass
class Ended:
    returncode: int
    stdout: str
    stderr: str
    started: set[int]  # every process below the command when it was signalled
    left: set[int]  # those still running once it had exited

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class Command:
    """A harness command (`python -m <args>`) in `cwd`, its own session, pipes read here."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.fifo = cwd / "announce.fifo"
        if not self.fifo.exists():
            os.mkfifo(self.fifo)
        # Read and write: the FIFO never reads as ended while no writer has it open.
        self.announced = os.open(self.fifo, os.O_RDWR | os.O_NONBLOCK)
        paths = [str(cwd / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]
        environ = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)),
                   ANNOUNCE_ENV: str(self.fifo), **(env or {})}
        environ.pop("PYTEST_ADDOPTS", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", *args], cwd=cwd, env=environ, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        assert self.process.stderr is not None
        self.stderr_fd = self.process.stderr.fileno()
        self.read: dict[int, bytes] = {}  # everything read from a descriptor so far
        self.searched: dict[int, int] = {}  # where the next search for a line starts

    def _read_until(self, fd: int, marker: bytes) -> str:
        """Read `fd` up to the end of the next line holding `marker`; that line."""
        while True:
            text, start = self.read.get(fd, b""), self.searched.get(fd, 0)
            found = text.find(marker, start)
            if found >= 0 and b"\n" in text[found:]:
                end = text.index(b"\n", found) + 1
                self.searched[fd] = end
                line_start = text.rfind(b"\n", 0, found) + 1
                return text[line_start:end].decode()
            ready, _, _ = select.select([fd], [], [], HANG_GUARD_SECONDS)
            if not ready:
                raise AssertionError(f"no {marker!r} within the hang guard; so far: {text!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                self.process.wait()
                raise AssertionError(f"ended before {marker!r} (exit "
                                     f"{self.process.returncode}); so far: {text!r}")
            self.read[fd] = text + chunk

    def wait_for_line(self, marker: str) -> str:
        """Read the command's standard error up to a line holding `marker`: that line."""
        return self._read_until(self.stderr_fd, marker.encode())

    def wait_for_mesh(self, what: str) -> int:
        """Wait until a process's adapter announces `what` ("blocked", "stepping"): its pid."""
        return int(self._read_until(self.announced, what.encode()).split()[-1])

    def wait_for_children(self, count: int) -> set[int]:
        """Wait until the command has started `count` child processes (a pool's workers):
        their pids. (A process announces nothing when it forks, so /proc is watched.)"""
        pause = threading.Event()
        for _ in range(int(HANG_GUARD_SECONDS / 0.01)):
            found = set(children(self.process.pid))
            if len(found) >= count:
                return found
            if self.process.poll() is not None:
                break
            pause.wait(0.01)
        raise AssertionError(f"no {count} child process(es) (exit {self.process.poll()})")

    def signal(self, signum: signal.Signals, *, group: bool = False) -> Ended:
        """Send `signum` to the command (`group`: to its whole process group, as a terminal
        does), wait for it to exit, and say which of its processes are left: of those below
        it when signalled, and any other of its group (started since)."""
        started = descendants(self.process.pid)
        if group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)
        try:
            self.process.wait(timeout=HANG_GUARD_SECONDS)
        finally:
            left = {pid for pid in started | group_members(self.process.pid) if running(pid)}
            # Whatever is left (or hung) must not outlive the test, nor hold its pipes.
            for pid in left | ({self.process.pid} if self.process.poll() is None else set()):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            stdout, stderr = self.process.communicate()
            os.close(self.announced)
        before = self.read.get(self.stderr_fd, b"")
        return Ended(self.process.returncode, stdout.decode(), (before + stderr).decode(),
                     started, left)


def group_members(group: int) -> set[int]:
    """The processes of process group `group`."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) > 2 and int(fields[2]) == group:
                members.add(int(entry.name))
    return members


def interrupted_lines(ended: Ended) -> list[str]:
    return [line for line in ended.stderr.splitlines() if ": interrupted (" in line]


EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
