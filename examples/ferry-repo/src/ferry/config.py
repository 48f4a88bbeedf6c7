"""Ferry's figures. Every one is stated again in pyproject.toml's [tool.harness.params]."""
from __future__ import annotations

from dataclasses import dataclass, field

WATERMARK = 256            # a hub's aggregate shed watermark
BREAKER_THRESHOLD = 100    # posts of one key admitted per window
BREAKER_WINDOW_MS = 1000
BREAKER_COOLDOWN_MS = 2000
BREAKER_MAX_KEYS = 512
RESPONSE_TIMEOUT_MS = 4000  # a call's (and a routed leg's) response timeout
CALL_RETRIES = 3            # re-sends of a refused call
RETRY_BASE_MS = 100
RETRY_CAP_MS = 1000
SUBSCRIBE_RETRIES = 5
SUBSCRIBE_TIMEOUT_MS = 2000
SUBSCRIBE_BACKOFF_MS = 100
STOP_BUDGET_MS = 8000
STAGE_SERVING = 300         # Active: holds for legs in flight
STAGE_DETACHING = 200       # gates closed; no leg may be in flight
STAGE_FINAL = 100
RECONNECT_BASE_MS = 50
RECONNECT_CAP_MS = 1000
BROKER_PORT = 7400
NODES = ("n1", "n2", "n3")
BROKER_HOST = "broker"


@dataclass(frozen=True)
class Settings:
    """Per-mesh settings; `bugs` switches planted defects on (empty in production)."""

    nodes: tuple[str, ...] = NODES
    broker_host: str = BROKER_HOST
    broker_port: int = BROKER_PORT
    bugs: frozenset[str] = field(default_factory=frozenset)

    def bug(self, name: str) -> bool:
        return name in self.bugs
