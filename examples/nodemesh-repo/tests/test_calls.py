"""Calls: correlation, the response timeout (never re-sent) and refusals (re-sent)."""

from __future__ import annotations

import asyncio

import pytest
from meshkit import QUICK, gate, keeper, mesh, run, until

from nodemesh import CallFailed, Envelope, Hooks, Settings


class Refuse(Hooks):
    """The callee refuses the first `times` attempts it sees."""

    def __init__(self, times: int, error: str = "Rejected") -> None:
        self.times, self.error = times, error

    async def before_take(self, node: str, env: Envelope, attempt: int) -> str | None:
        if self.times <= 0:
            return None
        self.times -= 1
        return self.error


def test_concurrent_calls_each_get_their_own_result() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            keeper(m["n2"], "echo")
            results = await asyncio.gather(
                *(m["n1"].call("n1/a", "n2/echo", "Echo", n) for n in range(5)))
            assert results == [0, 1, 2, 3, 4]
            assert len(log.named("taken")) == 5
            assert not log.named("late_reply")
    run(go())


def test_a_local_call_is_answered_without_a_leg() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            keeper(m["n1"], "echo")
            assert await m["n1"].call("n1/a", "n1/echo", "Echo", "hi") == "hi"
            assert not log.named("leg_opened")
    run(go())


def test_a_timed_out_call_is_sent_once_and_the_callee_still_runs_it() -> None:
    async def go() -> None:
        async with mesh(settings=Settings(response_timeout_ms=50)) as (m, log):
            release = gate(m["n2"], "slow")
            with pytest.raises(CallFailed) as failed:
                await m["n1"].call("n1/a", "n2/slow", "Work")
            assert (failed.value.error, failed.value.timed_out) == ("TimedOut", True)
            release.set()
            await until(lambda: bool(log.named("late_reply")))
            env_id = failed.value.env_id
            assert [e.name for e in log.about(env_id, "sent", "taken", "handled")] == [
                "sent", "taken", "handled"]
    run(go())


def test_a_refused_call_is_sent_again_after_a_backoff() -> None:
    async def go() -> None:
        async with mesh(hooks=Refuse(2)) as (m, log):
            keeper(m["n2"], "echo")
            assert await m["n1"].call("n1/a", "n2/echo", "Echo", 7) == 7
            assert [e["attempt"] for e in log.named("sent")] == [0, 1, 2]
            assert [e["error"] for e in log.named("refused")] == ["Rejected", "Rejected"]
            assert len(log.named("taken")) == 1
    run(go())


def test_refusals_are_re_sent_a_bounded_number_of_times() -> None:
    async def go() -> None:
        async with mesh(hooks=Refuse(100, "ShuttingDown")) as (m, log):
            keeper(m["n2"], "echo")
            with pytest.raises(CallFailed) as failed:
                await m["n1"].call("n1/a", "n2/echo", "Echo")
            assert (failed.value.error, failed.value.timed_out) == ("ShuttingDown", False)
            assert len(log.named("sent")) == QUICK.retries + 1
            assert not log.named("taken")
    run(go())


def test_a_full_hub_refuses_calls_as_rejected() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            m["n2"].open_hub("tiny", capacity=0)
            with pytest.raises(CallFailed, match="Rejected"):
                await m["n1"].call("n1/a", "n2/tiny", "Work")
            assert len(log.named("refused")) == QUICK.retries + 1
    run(go())


def test_a_raising_handler_fails_its_call_and_the_hub_goes_on() -> None:
    async def go() -> None:
        async with mesh() as (m, log):
            async def picky(env: Envelope) -> object:
                if env.body == "bad":
                    raise KeyError(env.body)
                return "ok"
            m["n2"].open_hub("picky", picky)
            with pytest.raises(CallFailed, match="HandlerRaised"):
                await m["n1"].call("n1/a", "n2/picky", "Work", "bad")
            assert await m["n1"].call("n1/a", "n2/picky", "Work", "good") == "ok"
            assert [e["error"] for e in log.named("handler_raised")] == ["KeyError"]
            assert len(log.named("sent")) == 2  # a handler's fault is an answer: not re-sent
    run(go())
