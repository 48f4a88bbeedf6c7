"""Ids stay unique across a node's rebuild; only system traffic passes without an identity,
and the mesh vouches for its own answers; a graceful stop holds for the requests its node
is still answering, so a peer's leg lands instead of losing its connection."""

from __future__ import annotations

import asyncio

from meshkit import QUICK, keeper, mesh, run, until

from nodemesh import DeliveryFailure, Envelope, Hooks, Roster, Traffic, make_node


def test_a_rebuilt_node_numbers_apart_from_its_predecessor() -> None:
    roster = Roster.local(["n1"])
    first = make_node("n1", roster)
    envelopes = [first.envelope("n1/a", "n1/b", "X") for _ in range(2)]
    rebuilt = make_node("n1", roster)
    envelopes += [rebuilt.envelope("n1/a", "n1/b", "X") for _ in range(2)]
    ids = [env.id for env in envelopes]
    # The first incarnation keeps the plain numbering; the next ones say which they are.
    assert ids == ["n1.1", "n1.2", "n1@2.1", "n1@2.2"]
    assert len(set(ids)) == len(ids)


def test_only_system_traffic_passes_without_an_identity() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            keeper(m["n2"], "bob")
            sent = {traffic: m["n1"].post("n1/alice", "n2/bob", "Note", identity=None,
                                          traffic=traffic) for traffic in Traffic}
            await until(lambda: len(log.named("queued", "unvouched")) == len(Traffic))
            let_in = {e["env"].id for e in log.named("queued")}
            assert let_in == {sent[Traffic.SYSTEM]}
            # A negative control: the same messages vouched for are all let in.
            vouched = [m["n1"].post("n1/alice", "n2/bob", "Note", traffic=traffic)
                       for traffic in Traffic]
            await until(lambda: len(log.named("queued")) == 1 + len(vouched))
    run(go())


def test_the_mesh_vouches_for_its_failure_answers_and_their_sender_takes_them() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            inbox = keeper(m["n1"], "alice")
            missing = m["n1"].post("n1/alice", "n2/nobody", "Hello")
            await until(lambda: len(inbox) == 1)
            assert DeliveryFailure.read(inbox[0]) == DeliveryFailure(missing, "NotFound")
            assert inbox[0].identity == "n1"  # the node that built it, once its leg failed
            assert not log.named("unvouched")
    run(go())


class _Stalled(Hooks):
    """Holds every attempt at its callee until `go` is set; `taking` says one is held."""

    def __init__(self) -> None:
        self.taking = asyncio.Event()
        self.go = asyncio.Event()

    async def before_take(self, node: str, env: Envelope, attempt: int) -> str | None:
        self.taking.set()
        await self.go.wait()
        return None


def test_a_graceful_stop_of_the_mesh_lets_a_request_its_callee_is_taking_land() -> None:
    async def go() -> None:
        hooks = _Stalled()
        async with mesh(hooks=hooks, settings=QUICK) as (m, log):
            got = keeper(m["n2"], "bob")
            posted = m["n1"].post("n1/alice", "n2/bob", "Hello")
            await hooks.taking.wait()  # n2 has read the request and is taking it
            stop = asyncio.create_task(m.stop(graceful=True))
            await until(lambda: len(log.named("hold_began")) == 2)
            # n2 has no leg of its own, yet it holds: it is still answering n1's request.
            assert {e["node"] for e in log.named("hold_began")} == {"n1", "n2"}
            hooks.go.set()
            await stop
            assert [env.id for env in got] == [posted]
            assert [e["outcome"] for e in log.named("leg_closed")] == ["landed"]
            assert not log.named("link_lost") or all(
                e["pending"] == 0 for e in log.named("link_lost"))
    run(go())


def test_a_stop_given_up_on_ends_the_hold_over_a_request_being_taken() -> None:
    # The negative control of the hold above: given up on, it holds no longer.
    async def go() -> None:
        hooks = _Stalled()
        async with mesh(hooks=hooks, settings=QUICK) as (m, log):
            keeper(m["n2"], "bob")
            m["n1"].post("n1/alice", "n2/bob", "Hello")
            await hooks.taking.wait()
            stop = asyncio.create_task(m.stop(graceful=True))
            await until(lambda: len(log.named("hold_began")) == 2)
            await m.stop(graceful=False)
            await stop
            assert {e["reason"] for e in log.named("hold_ended")} == {"cancelled"}
            assert [e["outcome"] for e in log.named("leg_closed")] == ["cut"]
    run(go())
