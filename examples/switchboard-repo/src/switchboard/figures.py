"""The switchboard's numbers, in one place (pyproject.toml states them to mesh-harness)."""

from __future__ import annotations

from dataclasses import dataclass

# Stop stages, highest first: the stop walks them in descending order.
STAGE_DRAIN = 30   # intake closed; hold until legs in flight have landed (or the budget)
STAGE_DETACH = 20  # calls still held by callees are dropped; no leg may be in flight here
STAGE_SEAL = 10    # every inbox's gate closes
STAGE_HALT = 0     # legs left in flight are cut, subscriptions end
STAGES = (STAGE_DRAIN, STAGE_DETACH, STAGE_SEAL, STAGE_HALT)


@dataclass(frozen=True, slots=True)
class Figures:
    """Every timing and bound the switchboard runs on; one instance per switchboard."""

    hop_ms: int = 2                    # one relay hop when the latency table names no link
    response_timeout_ms: int = 4000    # a call's caller gives up after this
    call_retries: int = 4              # re-sends of a refused call (never of a timed-out one)
    call_retry_base_ms: int = 100      # first re-send delay, doubled per re-send ...
    call_retry_cap_ms: int = 600       # ... up to this
    subscribe_retries: int = 3         # re-subscribes after the first attempt
    subscribe_timeout_ms: int = 2500   # one subscribe attempt's timeout
    subscribe_backoff_ms: int = 150    # the backoff before the first re-subscribe ...
    subscribe_backoff_factor: int = 2  # ... multiplied by this for each later one
    watermark: int = 1000              # inbox depth at which chatter is shed
    breaker_threshold: int = 500       # posts of one key admitted per window
    breaker_window_ms: int = 1000
    breaker_cooldown_ms: int = 1500
    breaker_max_keys: int = 4096
    stop_budget_ms: int = 12000        # how long a graceful stop holds for legs in flight

    def call_retry_delay_ms(self, retry: int) -> int:
        """The delay before re-send number `retry` + 1 (0-based)."""
        return min(self.call_retry_base_ms * (1 << retry), self.call_retry_cap_ms)

    def subscribe_backoff_before(self, attempt: int) -> int:
        """The backoff before subscribe attempt `attempt` (1 for the first re-subscribe)."""
        return int(self.subscribe_backoff_ms * self.subscribe_backoff_factor ** (attempt - 1))


DEFAULT_FIGURES = Figures()
