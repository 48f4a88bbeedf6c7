"""A fenced coroutine call (`open_connection`, say) ends the run at the step that makes
it, and the program never sees the error: a mesh that catches a failed connect and logs
it (as production code does) would otherwise log it once per example of a search and its
shrinking, tens of thousands of lines above the one that says what happened. The error
names the call site, since its traceback is the loop's."""

from __future__ import annotations

import asyncio
import logging

import pytest

from invariants.adapter import FirstChooser
from invariants.aio import AsyncMeshAdapter, FencedCall, run

log = logging.getLogger("fenced_mesh")


async def connect_and_log(attempts: int) -> int:
    """A connect retried on failure, each failure logged: the shape that buried the line."""
    failures = 0
    for _ in range(attempts):
        try:
            await asyncio.open_connection("example.invalid", 80)
        except Exception:
            failures += 1
            log.exception("connect failed")
            await asyncio.sleep(1)
    return failures


def test_a_caught_fenced_connect_logs_nothing_and_fails_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR), pytest.raises(FencedCall) as caught:
        run(connect_and_log(attempts=50))
    assert caplog.records == []  # the program's except never ran
    assert caught.value.call == "create_connection"
    assert str(caught.value).startswith("VirtualLoop.create_connection is fenced: ")
    assert str(caught.value).endswith(
        "(called in connect_and_log() at test_aio_fenced_output.py:25)")


def test_in_an_adapter_the_drive_ends_at_the_step(caplog: pytest.LogCaptureFixture) -> None:
    adapter = AsyncMeshAdapter(FirstChooser())
    adapter.spawn(connect_and_log(attempts=50))
    with caplog.at_level(logging.ERROR), pytest.raises(FencedCall, match="create_connection"):
        adapter.advance(60_000)
    assert caplog.records == []
    assert adapter.now_ms() == 0  # the retries' sleeps never ran


def test_the_control_an_ordinary_failed_connect_is_caught_and_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same program, its connect failing as a real one can: every attempt is logged,
    # so the empty record above is the fence's doing.
    async def refused(*args: object, **kwargs: object) -> None:
        raise ConnectionRefusedError("refused")

    monkeypatch.setattr(asyncio, "open_connection", refused)
    with caplog.at_level(logging.ERROR):
        assert run(connect_and_log(attempts=3)).result == 3
    assert [r.getMessage() for r in caplog.records] == ["connect failed"] * 3


def test_a_plain_fenced_method_still_raises_where_it_is_called() -> None:
    # asyncio's plain methods return at once: the fence raises there, and the program sees
    # it (a caught one still fails the run).
    async def main() -> str:
        try:
            asyncio.get_running_loop().add_reader(0, lambda: None)
        except FencedCall as error:
            return error.call
        return "not fenced"

    with pytest.raises(FencedCall, match="add_reader"):
        run(main())


def test_outside_a_drive_a_fenced_coroutine_method_raises_at_the_call() -> None:
    adapter = AsyncMeshAdapter(FirstChooser())
    with pytest.raises(FencedCall, match=r"^VirtualLoop\.getaddrinfo is fenced: "):
        adapter.loop.getaddrinfo("localhost", 80)
