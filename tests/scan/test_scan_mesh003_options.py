"""MESH003's `idempotent_calls`: a call listed there is never the retried call, and every
finding message names the key, so a reader who knows better can say so."""

from __future__ import annotations

import textwrap

import pytest

from invariants.scan.engine import analyze_source
from invariants.scan.model import RuleOptions, ScanConfig
from invariants.scan.rules.mesh003_resend_after_timeout import INVALID

SOURCES = [pytest.param(source, id=f"invalid-{n}") for n, (source, _) in enumerate(INVALID)]


def mesh003(source: str, config: ScanConfig) -> list[str]:
    report = analyze_source("m.py", textwrap.dedent(source).encode(), config, is_test=False)
    return [f.message for f in report.findings if f.rule == "MESH003"]


@pytest.mark.parametrize("source", SOURCES)
def test_every_message_names_idempotent_calls(source: str) -> None:
    messages = mesh003(source, ScanConfig())
    assert messages and all("idempotent_calls" in m for m in messages)


def test_a_listed_call_is_not_retried_work() -> None:
    source = """
        from tenacity import retry, retry_if_exception_type

        class Link:
            @retry(retry=retry_if_exception_type(TimeoutError))
            def deliver(self, d):
                self.write(d)

        def resend(router, d):
            for _ in range(3):
                try:
                    return router.cache.post(d)
                except TimeoutError:
                    continue
        """
    assert len(mesh003(source, ScanConfig())) == 2  # negative control: both reported
    listed = RuleOptions({"idempotent_calls": ("Link.deliver", "cache.post")})
    assert mesh003(source, ScanConfig(options=listed)) == []
    # a tail must match whole components: `che.post` does not list `cache.post`
    partial = RuleOptions({"idempotent_calls": ("che.post",)})
    assert len(mesh003(source, ScanConfig(options=partial))) == 2
