"""The mesh's figures, in one place (pyproject's [tool.harness.params] states the same)."""

from __future__ import annotations

from dataclasses import dataclass, field

WATERMARK = 200            # a hub sheds can-be-ignored letters at this queue depth
BREAKER_THRESHOLD = 500    # posts of one key a hub admits per window
BREAKER_WINDOW_MS = 1000
BREAKER_COOLDOWN_MS = 1500
BREAKER_MAX_KEYS = 4096
SUBSCRIBE_TIMEOUT_MS = 1500
SUBSCRIBE_BACKOFF_MS = 100  # doubled after each failed attempt
DELIVERY_RETRIES = 4        # re-sends of a refused call
RETRY_BASE_MS = 100         # first re-send delay, doubled per re-send ...
RETRY_CAP_MS = 800          # ... up to this
RESPONSE_TIMEOUT_MS = 2000  # a call's response timeout
RETRANSMIT_MS = 100         # the transport's retransmission timer
STOP_BUDGET_MS = 10000      # how long a graceful stop holds for legs in flight
STAGE_SERVING = 300         # the stop's stages, highest first
STAGE_DETACHING = 200
STAGE_FINAL = 100


@dataclass(frozen=True)
class Settings:
    """One cluster's figures and its switches (`flaws` names defects switched on, for the
    mesh's own bug-hunting experiments; empty in every real deployment)."""

    watermark: int = WATERMARK
    breaker_threshold: int = BREAKER_THRESHOLD
    breaker_window_ms: int = BREAKER_WINDOW_MS
    breaker_cooldown_ms: int = BREAKER_COOLDOWN_MS
    breaker_max_keys: int = BREAKER_MAX_KEYS
    subscribe_timeout_ms: int = SUBSCRIBE_TIMEOUT_MS
    subscribe_backoff_ms: int = SUBSCRIBE_BACKOFF_MS
    delivery_retries: int = DELIVERY_RETRIES
    retry_base_ms: int = RETRY_BASE_MS
    retry_cap_ms: int = RETRY_CAP_MS
    response_timeout_ms: int = RESPONSE_TIMEOUT_MS
    retransmit_ms: int = RETRANSMIT_MS
    stop_budget_ms: int = STOP_BUDGET_MS
    flaws: frozenset[str] = field(default_factory=frozenset)

    def retry_delay_ms(self, retry: int) -> int:
        return min(self.retry_base_ms * (2 ** retry), self.retry_cap_ms)

    def has(self, flaw: str) -> bool:
        return flaw in self.flaws
