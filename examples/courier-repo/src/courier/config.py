"""The mesh's figures and its switches."""
from __future__ import annotations

from dataclasses import dataclass, field

RESPONSE_TIMEOUT_MS = 1500      # a cross-node call's response timeout
CALL_RETRIES = 4                # re-sends of a refused call
RETRY_BASE_MS = 200             # first re-send delay, doubled per re-send
RETRY_CAP_MS = 1000             # cap on a re-send delay
SUB_RETRIES = 3                 # subscription re-tries
SUB_TIMEOUT_MS = 1200           # one subscribe try
SUB_BACKOFF_MS = 150            # first re-subscribe delay, doubled
STOP_BUDGET_MS = 10_000         # a graceful stop's hold, at most
STAGE_SERVING, STAGE_DETACH, STAGE_FINAL = 30, 20, 10
WATERMARK = 64                  # a hub's queue depth past which droppable mail is shed
PORT = 7100


@dataclass
class Config:
    response_timeout_ms: int = RESPONSE_TIMEOUT_MS
    call_retries: int = CALL_RETRIES
    retry_base_ms: int = RETRY_BASE_MS
    retry_cap_ms: int = RETRY_CAP_MS
    sub_retries: int = SUB_RETRIES
    sub_timeout_ms: int = SUB_TIMEOUT_MS
    sub_backoff_ms: int = SUB_BACKOFF_MS
    stop_budget_ms: int = STOP_BUDGET_MS
    watermark: int = WATERMARK
    bugs: frozenset[str] = field(default_factory=frozenset)

    def bug(self, name: str) -> bool:
        return name in self.bugs

    def retry_delay_ms(self, n: int) -> int:
        return min(self.retry_base_ms * 2 ** n, self.retry_cap_ms)
