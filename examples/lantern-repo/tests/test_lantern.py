"""Lantern's own tests: the parts on their own, and the mesh on the stock loop over 127.0.0.1."""

from __future__ import annotations

import asyncio

from lantern.__main__ import demo
from lantern.breaker import DROP, OK, TRIP, Breaker
from lantern.cluster import Cluster
from lantern.config import Figures
from lantern.messages import FAILURE, IGNORABLE, SYSTEM, USER, DeliveryFailure, envelope, may_answer
from lantern.node import is_resendable
from lantern.wire import decode, encode


def test_frames_are_one_json_object_per_line() -> None:
    frame = {"k": "deliver", "cid": "c1", "env": envelope("d1", "a", "b", "Ping")}
    line = encode(frame)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode(line) == frame


def test_only_ordinary_traffic_may_be_answered() -> None:
    ping = envelope("d1", "a", "b", "Ping", USER)
    assert may_answer(ping)
    assert may_answer(envelope("d2", "a", "b", "Subscribe", SYSTEM))
    assert not may_answer(envelope("d3", "a", "b", "Heartbeat", IGNORABLE))
    failure = DeliveryFailure(ping, "NotFound", "a1")
    assert failure["cls"] == FAILURE and failure["ans"] == "d1" and failure["tgt"] == "a"
    assert not may_answer(failure)


def test_only_refusals_are_resent() -> None:
    assert is_resendable("rejected")
    assert not is_resendable("Timeout")
    assert not is_resendable("Unavailable")


def test_breaker_windows_open_at_a_keys_first_post_and_cool_down() -> None:
    breaker = Breaker(threshold=2, window_ms=500, cooldown_ms=1000, max_keys=8)
    key = ("a", "b", "Ping", None)
    assert [breaker.admit(key, 0), breaker.admit(key, 0)] == [OK, OK]
    assert breaker.admit(key, 0) == TRIP
    assert breaker.admit(key, 999_999) == DROP
    assert breaker.admit(key, 1_000_000) == OK
    assert breaker.admit(key, 1_500_000) == OK  # a new window opened at the first post after the last


def test_retry_and_resubscribe_delays() -> None:
    fig = Figures()
    assert [fig.retry_delay_ms(n) for n in range(5)] == [100, 200, 400, 800, 800]
    assert [fig.resubscribe_delay_ms(n) for n in (1, 2, 3)] == [100, 200, 400]


def test_the_demo_runs_on_the_stock_loop() -> None:
    assert asyncio.run(demo()) == 0


def test_a_call_to_a_missing_hub_is_answered_not_found() -> None:
    async def scenario() -> int:
        cluster = Cluster(("n1", "n2"))
        await asyncio.gather(*(node.start_task for node in cluster.nodes.values()))
        cluster.add_hub("client")
        cluster.post(envelope(cluster.new_id("d"), "client", "nowhere", "Ping"), "grain")
        await asyncio.sleep(0.05)
        hub = cluster.nodes[cluster.node_of("client")].hubs["client"]
        handled = hub.handled
        await cluster.close()
        return handled

    assert asyncio.run(scenario()) == 1  # the DeliveryFailure, handled at the client


def test_a_graceful_stop_refuses_new_dispatches() -> None:
    async def scenario() -> tuple[bool, int]:
        cluster = Cluster(("n1", "n2"))
        await asyncio.gather(*(node.start_task for node in cluster.nodes.values()))
        for hub in ("alpha", "client"):
            cluster.add_hub(hub)
        stop = cluster.request_stop(graceful=True)
        assert stop is not None
        await stop
        cluster.post(envelope(cluster.new_id("d"), "client", "alpha", "Ping"), "monolith")
        await asyncio.sleep(0.05)
        alpha = cluster.nodes[cluster.node_of("alpha")].hubs["alpha"]
        await cluster.close()
        return cluster.stopped, alpha.handled

    assert asyncio.run(scenario()) == (True, 0)
