"""The relay's figures, in one place, and the stop's stages."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Stage(IntEnum):
    """Stop stages, run from the highest number down."""

    ACCEPTING = 90  # holds while accepted legs are in flight
    DETACHING = 60  # callees drop the calls they still hold
    SEALING = 30  # every node's intake gate closes
    FINAL = 0  # whatever is still in flight is cut


@dataclass(frozen=True)
class RelayConfig:
    """Timeouts, budgets and thresholds; every duration is in milliseconds."""

    link_ms: int = 2
    watermark: int = 4096
    breaker_threshold: int = 600
    breaker_window_ms: int = 500
    breaker_cooldown_ms: int = 1500
    breaker_max_keys: int = 5000
    watch_retries: int = 5
    watch_timeout_ms: int = 4000
    watch_backoff_ms: int = 200
    watch_backoff_factor: int = 2
    call_timeout_ms: int = 8000
    call_retries: int = 5
    call_retry_base_ms: int = 100
    call_retry_cap_ms: int = 1000
    stop_budget_ms: int = 15000

    def call_retry_delay_ms(self, retry: int) -> int:
        """Delay before re-sending a refused call, retry 0 being the first re-send."""
        return min(self.call_retry_base_ms << retry, self.call_retry_cap_ms)

    def watch_backoff_delay_ms(self, retry: int) -> int:
        """Backoff before resubscribing, retry 0 being the first resubscribe."""
        return int(self.watch_backoff_ms * self.watch_backoff_factor**retry)


# Small figures for running the relay in real time (the demo).
QUICK = RelayConfig(
    link_ms=1,
    watch_timeout_ms=200,
    watch_backoff_ms=5,
    call_timeout_ms=200,
    call_retry_base_ms=5,
    call_retry_cap_ms=20,
    stop_budget_ms=500,
)
