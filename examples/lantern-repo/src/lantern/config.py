"""Lantern's figures: every timeout, budget and bound in one frozen record."""

from __future__ import annotations

from dataclasses import dataclass

# Stop stages, highest first: serving (holds for legs), detaching (gates close), final.
STAGE_SERVING = 30
STAGE_DETACHING = 20
STAGE_FINAL = 10

# Error names carried by failure answers and attempt failures.
NOT_FOUND = "NotFound"
SHUTTING_DOWN = "ShuttingDown"
TIMEOUT = "Timeout"
UNAVAILABLE = "Unavailable"
REFUSED = "rejected"  # a callee refusal: it holds nothing, so a re-send is safe


@dataclass(frozen=True)
class Figures:
    response_timeout_ms: int = 2000
    call_retries: int = 3
    retry_base_ms: int = 100
    retry_cap_ms: int = 800
    subscribe_retries: int = 3
    subscribe_timeout_ms: int = 1000
    subscribe_backoff_ms: int = 100
    subscribe_backoff_factor: int = 2
    stop_budget_ms: int = 5000
    watermark: int = 64
    breaker_threshold: int = 100
    breaker_window_ms: int = 500
    breaker_cooldown_ms: int = 1000
    breaker_max_keys: int = 4096

    def retry_delay_ms(self, failed_attempt: int) -> int:
        return min(self.retry_base_ms * 2 ** failed_attempt, self.retry_cap_ms)

    def resubscribe_delay_ms(self, attempt: int) -> int:
        return self.subscribe_backoff_ms * self.subscribe_backoff_factor ** (attempt - 1)
