"""The reply/timeout race, explored over every schedule of a small program: a reply that
lands on its deadline (sent back over a hop, so its timer and the timeout's were armed at
different instants and may fall due in either order) is delivered and still lost with
`asyncio.timeout` on 3.11-3.13, and with `asyncio.wait_for` only from 3.12 (3.11's
wait_for returns a reply that arrived before it woke)."""

from __future__ import annotations

import asyncio
import itertools
import sys

from aio_programs import ScriptChooser

from invariants.aio import run


async def reply_on_the_deadline(log: list[str], use_wait_for: bool) -> None:
    loop = asyncio.get_running_loop()
    reply: asyncio.Future[str] = loop.create_future()

    def answer() -> None:
        if not reply.done():
            reply.set_result("reply")

    loop.call_later(0.05, loop.call_later, 0.05, answer)  # sent back at 50 ms over a hop
    try:
        if use_wait_for:
            log.append(await asyncio.wait_for(reply, 0.1))
        else:
            async with asyncio.timeout(0.1):
                log.append(await reply)
    except TimeoutError:
        log.append("lost reply" if reply.done() and not reply.cancelled() else "timeout")


def _outcomes(use_wait_for: bool) -> set[str]:
    outcomes = set()
    for script in itertools.product(range(3), repeat=4):
        log: list[str] = []
        run(reply_on_the_deadline(log, use_wait_for), chooser=ScriptChooser(script))
        outcomes.add(log[0])
    return outcomes


def test_asyncio_timeout_can_lose_a_delivered_reply() -> None:
    assert _outcomes(use_wait_for=False) == {"reply", "timeout", "lost reply"}


def test_wait_for_loses_one_only_from_3_12() -> None:
    expected = {"reply", "timeout"}
    if sys.version_info >= (3, 12):
        expected.add("lost reply")  # wait_for is asyncio.timeout underneath
    assert _outcomes(use_wait_for=True) == expected
