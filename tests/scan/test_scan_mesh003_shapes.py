"""MESH003's shapes as docs/static-rules.md states them, each beside a clean twin that
differs in the one thing the rule reads."""

from __future__ import annotations

import textwrap

import pytest

from invariants.scan.engine import analyze_source
from invariants.scan.model import ScanConfig

# (flagged source, lines, clean twin)
SHAPES = {
    "async-retrying-retries-everything": (
        """
        from tenacity import AsyncRetrying, stop_after_attempt

        async def deliver_it(router, d):
            async for attempt in AsyncRetrying(stop=stop_after_attempt(3)):
                with attempt:
                    await router.deliver(d)
        """,
        [7],
        """
        from tenacity import AsyncRetrying, retry_if_exception_type

        async def deliver_it(router, d):
            async for attempt in AsyncRetrying(retry=retry_if_exception_type(RejectedError)):
                with attempt:
                    await router.deliver(d)
        """,
    ),
    "asyncio-create-task-in-a-timeout-handler": (
        """
        import asyncio

        class Router:
            async def deliver(self, d):
                try:
                    await self.link.write(d)
                except TimeoutError:
                    asyncio.create_task(self.deliver(d))
        """,
        [9],
        """
        import asyncio

        class Router:
            async def deliver(self, d):
                try:
                    await self.link.write(d)
                except RejectedError:
                    asyncio.create_task(self.deliver(d))
        """,
    ),
    "bare-ensure-future-from-asyncio": (
        """
        from asyncio import ensure_future

        class Router:
            async def deliver(self, d):
                try:
                    await self.link.write(d)
                except TimeoutError:
                    ensure_future(self.deliver(d))
        """,
        [9],
        """
        from .tasks import ensure_future

        class Router:
            async def deliver(self, d):
                try:
                    await self.link.write(d)
                except TimeoutError:
                    ensure_future(self.deliver(d))
        """,
    ),
    "helper-given-the-predicate-positionally": (
        """
        def send_later(router, d):
            return retry_call(router.send, is_transient)
        """,
        [3],
        """
        def send_later(router, d):
            return retry_call(router.send, is_resendable)
        """,
    ),
    "helper-given-the-call-result-is-no-retry": (
        """
        def send_later(router, d):
            return retry_call(lambda: router.send(d), is_transient)
        """,
        [3],
        """
        def send_later(router, d):
            return retry_call(router.send(d), is_transient)
        """,
    ),
    "nested-loops-report-a-call-once": (
        """
        async def deliver_all(router, batches):
            while True:
                for d in batches:
                    try:
                        await router.deliver(d)
                    except TimeoutError:
                        pass
        """,
        [6],
        """
        async def deliver_all(router, batches):
            while True:
                for d in batches:
                    try:
                        await router.deliver(d)
                    except RejectedError:
                        pass
        """,
    ),
    "a-gate-of-two-predicates-reports-a-call-once": (
        """
        def failed(router, d, exc):
            if is_transient(exc) or is_transient(exc.__cause__):
                router.send(d)
        """,
        [4],
        """
        def failed(router, d, exc):
            if is_resendable(exc) or is_resendable(exc.__cause__):
                router.send(d)
        """,
    ),
}


def mesh003_lines(source: str) -> list[int]:
    report = analyze_source("m.py", textwrap.dedent(source).encode(), ScanConfig(), is_test=False)
    return sorted(f.line for f in report.findings if f.rule == "MESH003")


@pytest.mark.parametrize(("flagged", "lines", "clean"), SHAPES.values(), ids=SHAPES.keys())
def test_the_shape_is_flagged_and_its_twin_is_not(
    flagged: str, lines: list[int], clean: str
) -> None:
    assert mesh003_lines(flagged) == lines
    assert mesh003_lines(clean) == []
