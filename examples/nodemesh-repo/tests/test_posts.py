"""Posts: across nodes and on one, and the failure answers of what cannot be delivered."""

from __future__ import annotations

from meshkit import keeper, mesh, run, until

from nodemesh import DeliveryFailure, Settings, Traffic


def test_a_post_to_another_node_travels_packaged_and_is_handled_there() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            got = keeper(m["n2"], "bob")
            keeper(m["n1"], "alice")
            sent = m["n1"].post("n1/alice", "n2/bob", "Hello", {"n": 1}, key="s1")
            await until(lambda: bool(got) and not m["n1"].in_flight)
            assert (got[0].id, got[0].body, got[0].key) == (sent, {"n": 1}, "s1")
            assert [e["packaged"] for e in log.about(sent, "offered")] == [True]
            assert [e["outcome"] for e in log.about(sent, "leg_closed")] == ["landed"]
            local = m["n1"].post("n1/alice", "n1/alice", "Note")
            assert [e["packaged"] for e in log.about(local, "offered")] == [False]
            assert not log.about(local, "leg_opened")  # no leg on one node
    run(go())


def test_posts_to_a_missing_hub_are_answered_once_with_a_delivery_failure() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            inbox = keeper(m["n1"], "alice")
            remote = m["n1"].post("n1/alice", "n2/nobody", "Hello")
            local = m["n1"].post("n1/alice", "n1/nobody", "Hello")
            unknown = m["n1"].post("n1/alice", "n9/nobody", "Hello")
            await until(lambda: len(inbox) == 3)
            answers = {DeliveryFailure.read(env).answers: DeliveryFailure.read(env).error
                       for env in inbox}
            assert answers == {remote: "NotFound", local: "NotFound", unknown: "NotFound"}
            assert len(log.named("failure_sent")) == 3
            assert [e["outcome"] for e in log.about(remote, "leg_closed")] == ["failed"]
    run(go())


def test_heartbeats_and_failures_are_never_answered() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            inbox = keeper(m["n1"], "alice")
            beat = m["n1"].post("n1/alice", "n2/nobody", "Ping", traffic=Traffic.HEARTBEAT)
            answer = m["n1"].post("n1/alice", "n2/nobody", DeliveryFailure.KIND,
                                  {"answers": "x", "error": "NotFound"},
                                  traffic=Traffic.FAILURE)
            await until(lambda: len(log.named("answer_withheld")) == 2)
            assert [e["env"].id for e in log.named("answer_withheld")] == [beat, answer]
            assert not log.named("failure_sent") and not inbox
            # A failure answering a post to a missing sender is not answered either.
            m["n1"].post("n1/ghost", "n2/nobody", "Hello")
            await until(lambda: len(log.named("answer_withheld")) == 3)
            assert len(log.named("failure_sent")) == 1
    run(go())


def test_a_post_nobody_vouched_for_ends_at_the_intake_unanswered() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            inbox, got = keeper(m["n1"], "alice"), keeper(m["n2"], "bob")
            bare = m["n1"].post("n1/alice", "n2/bob", "Hello", identity=None)
            system = m["n1"].post("n1/alice", "n2/bob", "Sync", identity=None,
                                  traffic=Traffic.SYSTEM)
            await until(lambda: len(got) == 1 and not m["n1"].in_flight)
            assert [env.id for env in got] == [system]
            assert [e.name for e in log.about(bare, "unvouched", "queued")] == ["unvouched"]
            assert not inbox and not log.named("failure_sent")
    run(go())


def test_an_unreachable_node_is_answered_as_such() -> None:
    async def go() -> None:
        async with mesh(("n1", "n2", "n3")) as (m, _):
            inbox = keeper(m["n1"], "alice")
            await m["n3"].stop()  # its port is bound once and then closed
            m["n1"].post("n1/alice", "n3/carol", "Hello")
            await until(lambda: len(inbox) == 1)
            assert DeliveryFailure.read(inbox[0]).error == "Unreachable"
    run(go())


def test_a_hub_sheds_heartbeats_above_its_watermark_but_never_user_traffic() -> None:
    async def go() -> None:
        async with mesh(settings=Settings(watermark=0)) as (m, log):
            got = keeper(m["n1"], "alice")
            beat = m["n1"].post("n1/alice", "n1/alice", "Ping", traffic=Traffic.HEARTBEAT)
            user = m["n1"].post("n1/alice", "n1/alice", "Hello")
            await until(lambda: len(got) == 1)
            assert [e.name for e in log.about(beat, "shed", "queued")] == ["shed"]
            assert [env.id for env in got] == [user]
    run(go())
