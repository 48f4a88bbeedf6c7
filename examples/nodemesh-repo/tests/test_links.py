"""Connections: what a lost connection does to what waits on it, and the reconnect."""

from __future__ import annotations

import asyncio

import pytest
from meshkit import keeper, mesh, run, until

from nodemesh import CallFailed, DeliveryFailure, Envelope, Hooks


class Hold(Hooks):
    """The callee holds every attempt before deciding (the connection dies meanwhile)."""

    def __init__(self) -> None:
        self.holding = 0

    async def before_take(self, node: str, env: Envelope, attempt: int) -> str | None:
        self.holding += 1
        await asyncio.Event().wait()  # cancelled when the callee stops
        return None


def test_a_lost_connection_fails_what_waits_on_it_and_nothing_is_re_sent() -> None:
    async def go() -> None:
        hold = Hold()
        async with mesh(hooks=hold) as (m, log):
            inbox = keeper(m["n1"], "alice")
            keeper(m["n2"], "bob")
            call = asyncio.create_task(m["n1"].call("n1/alice", "n2/bob", "Work"))
            post = m["n1"].post("n1/alice", "n2/bob", "Hello")
            await until(lambda: hold.holding == 2)
            await m["n2"].stop(graceful=False)  # closes the connection n1 dialled
            with pytest.raises(CallFailed, match="LinkLost"):
                await call
            await until(lambda: len(inbox) == 1)
            assert DeliveryFailure.read(inbox[0]) == DeliveryFailure(post, "LinkLost")
            assert len(log.named("sent")) == 2  # one attempt each
            assert [e["pending"] for e in log.named("link_lost")] == [2]
    run(go())


def test_a_rebuilt_node_is_dialled_again_on_the_next_request() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            keeper(m["n2"], "echo")
            assert await m["n1"].call("n1/a", "n2/echo", "Echo", 1) == 1
            port = m.roster.address("n2")[1]
            await m["n2"].stop(graceful=False)
            await until(lambda: bool(log.named("link_lost")))
            with pytest.raises(CallFailed, match="Unreachable"):
                await m["n1"].call("n1/a", "n2/echo", "Echo", 2)  # down: nothing to dial
            keeper(await m.rebuild("n2"), "echo")
            assert m.roster.address("n2")[1] == port
            assert await m["n1"].call("n1/a", "n2/echo", "Echo", 3) == 3
            assert [e["peer"] for e in log.named("link_up")] == ["n2", "n2"]
    run(go())
