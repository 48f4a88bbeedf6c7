"""Lantern: a small multi-node asyncio message mesh.

Nodes talk newline-delimited JSON over TCP connections that are dialed lazily, on the
first frame for a peer, and then pooled (one connection per ordered node pair, reused
by every frame and matched by correlation id).
"""

from lantern.config import Figures

__all__ = ["Figures"]
