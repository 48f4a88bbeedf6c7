"""Pigeon: a small message mesh whose nodes talk over UDP datagrams.

Each node (`pigeon.node.Node`) hosts hubs (`pigeon.hub.Hub`, one message at a time) and
reaches the other nodes through a `pigeon.transport.PeerLink`: sequence numbers,
acknowledgements, retransmission on a timer and de-duplication on top of plain UDP.
`pigeon.cluster.Cluster` is the membership (which node hosts which hub) and the staged stop.
"""

from pigeon.settings import Settings

__all__ = ["Settings"]
