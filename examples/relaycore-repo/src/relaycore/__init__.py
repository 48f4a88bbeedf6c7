"""relaycore: a small message relay on plain asyncio callbacks and futures.

Nodes are protocol objects fed by in-memory transports; a switchboard routes frames
between them as counted legs, a call router makes request/reply calls under a
response timeout, watches are bounded subscriptions, and the stop is staged.
"""

from relaycore.config import RelayConfig, Stage
from relaycore.relay import Relay

__all__ = ["Relay", "RelayConfig", "Stage"]
