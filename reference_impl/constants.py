"""The production numbers of the mesh, in one place (virtual time is integer milliseconds)."""

from __future__ import annotations

from typing import Final

# Storm breaker (per key) and aggregate watermark (per hub).
BREAKER_WINDOW_MS: Final = 1_000
BREAKER_THRESHOLD: Final = 2_000  # the 2001st message in one window trips
BREAKER_COOLDOWN_MS: Final = 2_000
BREAKER_MAX_KEYS: Final = 10_000
DEFAULT_AGGREGATE_WATERMARK: Final = 10_000

# Bounded subscribe.
SUBSCRIBE_RETRIES: Final = 5
SUBSCRIBE_FIRST_DELAY_MS: Final = 250  # doubling
SUBSCRIBE_TIMEOUT_MS: Final = 30_000

# Grain calls and the delivery retry ladder.
RESPONSE_TIMEOUT_MS: Final = 30_000
DELIVERY_RETRIES: Final = 6  # 7 calls in all
RETRY_BASE_DELAY_MS: Final = 250
RETRY_MAX_DELAY_MS: Final = 3_000
EXCEPTION_GRAPH_CAP: Final = 256

# Latency of one router hop (a route leg's arrival, a NACK's arrival, a grain call's run).
HOP_MS: Final = 1

# Routing pool in-flight gauge.
SATURATION_HIGH: Final = 64
SATURATION_LOW: Final = 32

# Silo stop.
STOP_BUDGET_MS: Final = 30_000
STAGE_ACTIVE: Final = 20_000
STAGE_BECOME_ACTIVE: Final = 19_999
STAGE_GRAIN_DEACTIVATION: Final = 19_998
STAGE_RUNTIME_SERVICES: Final = 4_000
STAGE_RUNTIME_INITIALIZE: Final = 2_000
STAGE_FIRST: Final = -(2**31)
STOP_STAGES: Final = (
    STAGE_ACTIVE,
    STAGE_BECOME_ACTIVE,
    STAGE_GRAIN_DEACTIVATION,
    STAGE_RUNTIME_SERVICES,
    STAGE_RUNTIME_INITIALIZE,
    STAGE_FIRST,
)


def retry_delay_ms(retry: int) -> int:
    """Delay before retry number `retry` (0-based): min(250 * 2^n, 3000)."""
    return min(RETRY_BASE_DELAY_MS * (1 << retry), RETRY_MAX_DELAY_MS)
