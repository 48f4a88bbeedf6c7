"""nodemesh: hubs on asyncio nodes that talk length-prefixed JSON over TCP."""

from .calls import CallFailed
from .cluster import Cluster
from .envelope import DeliveryFailure, Envelope, Traffic, may_answer, split_address
from .hooks import Hooks
from .hub import Handler, Hub, Intake
from .legs import Leg, Outcome
from .node import Node, make_node
from .observer import Event, EventLog, Observer
from .settings import Roster, Settings, Stage
from .shutdown import Phase

__all__ = [
    "CallFailed", "Cluster", "DeliveryFailure", "Envelope", "Event", "EventLog", "Handler",
    "Hooks", "Hub", "Intake", "Leg", "Node", "Observer", "Outcome", "Phase", "Roster",
    "Settings", "Stage", "Traffic", "make_node", "may_answer", "split_address",
]
