"""MESH003 reads `except*` as it reads `except`: a handler that catches a timeout, alone or
in the exception group a TaskGroup raises, and only logs, re-sends the batch."""

from __future__ import annotations

import re
import textwrap

import libcst as cst
import pytest

from invariants.scan.engine import analyze_source
from invariants.scan.model import ScanConfig
from invariants.scan.rules.mesh003_resend_after_timeout import INVALID, VALID

BATCH = """
import asyncio
import asyncio as aio
from asyncio import TimeoutError as Expired

async def deliver_batch(router, batch):
    for attempt in range(3):
        try:
            async with asyncio.TaskGroup() as tg:
                for d in batch:
                    tg.create_task(router.deliver(d))
            return
        except{star} {caught}:
            log.warning("batch failed, re-sending")
"""
SENT_LINE = 11

TIMEOUTS = [
    "TimeoutError",
    "asyncio.TimeoutError",
    "aio.TimeoutError",
    "Expired",
    "(ValueError, TimeoutError)",
    "(RejectedError, asyncio.TimeoutError)",
]
NOT_TIMEOUTS = ["ValueError", "(ValueError, RejectedError)", "Exception", "asyncio.CancelledError"]


def mesh003_lines(source: str) -> list[int]:
    report = analyze_source("m.py", source.encode(), ScanConfig(), is_test=False)
    assert not report.problems and not [f for f in report.findings if f.rule == "MESH000"]
    return sorted(f.line for f in report.findings if f.rule == "MESH003")


@pytest.mark.parametrize("star", ["", "*"], ids=["except", "except-star"])
@pytest.mark.parametrize("caught", TIMEOUTS)
def test_a_timeout_handler_that_only_logs_resends_the_batch(star: str, caught: str) -> None:
    assert mesh003_lines(BATCH.format(star=star, caught=caught)) == [SENT_LINE]


@pytest.mark.parametrize("star", ["", "*"], ids=["except", "except-star"])
@pytest.mark.parametrize("caught", NOT_TIMEOUTS)
def test_a_handler_of_something_else_is_clean(star: str, caught: str) -> None:
    # negative control of the test above: the same body, the handler names no timeout
    assert mesh003_lines(BATCH.format(star=star, caught=caught)) == []


def test_the_starred_batch_is_a_try_star() -> None:
    # the shape under test really is `except*` (libcst's TryStar), not a plain try
    module = cst.parse_module(BATCH.format(star="*", caught="TimeoutError"))
    function = module.body[-1]
    assert isinstance(function, cst.FunctionDef)
    assert "TryStar" in repr(function)
    plain = cst.parse_module(BATCH.format(star="", caught="TimeoutError"))
    assert "TryStar" not in repr(plain)


_PLAIN = re.compile(r"\bexcept (?=\S)")
_STARRED = re.compile(r"\bexcept\* ?")


def _compiles(source: str) -> bool:
    try:
        compile(source, "m.py", "exec", dont_inherit=True)
    except SyntaxError:  # `continue`/`break`/`return` in an except* handler, a bare except
        return False
    return True


def _twins() -> list[tuple[str, str]]:
    """Each rule example written with `except` and with `except*`, where both compile."""
    examples = [*VALID, *(source for source, _ in INVALID)]
    pairs = []
    for example in examples:
        plain = _STARRED.sub("except ", textwrap.dedent(example))
        if _PLAIN.search(plain) is None:
            continue  # no handler (`retry_if_exception_type` is not one)
        starred = _PLAIN.sub("except* ", plain)
        if _compiles(plain) and _compiles(starred):
            pairs.append((plain, starred))
    return pairs


TWINS = _twins()


def test_the_examples_give_enough_twins() -> None:
    # the comparison below must not pass by comparing nothing
    assert len(TWINS) >= 8
    assert all(plain != starred and "except*" in starred for plain, starred in TWINS)
    assert sum(1 for plain, _ in TWINS if mesh003_lines(plain)) >= 4


@pytest.mark.parametrize(("plain", "starred"), TWINS, ids=[f"twin-{n}" for n in range(len(TWINS))])
def test_every_example_reads_the_same_with_except_star(plain: str, starred: str) -> None:
    assert mesh003_lines(starred) == mesh003_lines(plain)
