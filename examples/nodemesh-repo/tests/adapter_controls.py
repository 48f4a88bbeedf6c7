"""Adapters that break one convention on purpose: the negative controls of the adapter's
conformance test."""

from __future__ import annotations

from invariants.adapter import Chooser

from nodemesh.harness_adapter import NodeMeshAdapter


class _NeverRebuilt(NodeMeshAdapter):
    def restart_node(self, node: str) -> None:
        """A crashed node stays down: its host comes back with nothing running."""


def make_never_rebuilt(chooser: Chooser) -> NodeMeshAdapter:
    return _NeverRebuilt(chooser)
