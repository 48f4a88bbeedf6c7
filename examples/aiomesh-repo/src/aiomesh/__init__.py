"""aiomesh: a message mesh written as plain asyncio code.

Hubs are tasks reading asyncio queues; routed work travels as counted legs; calls are
request/response with correlation ids, a response timeout and a bounded retry of refused
calls; subscriptions are bounded; the stop holds for the legs in flight, within a budget.
It reads time only from its event loop, draws no random numbers and shares no state
between meshes, so it runs the same on any loop that keeps asyncio's promises.
"""

from aiomesh.bugs import BUGS, Bug
from aiomesh.envelope import DeliveryFailure, Kind, Message
from aiomesh.mesh import Mesh
from aiomesh.observer import Observer, Recorder

__all__ = ["BUGS", "Bug", "DeliveryFailure", "Kind", "Mesh", "Message", "Observer", "Recorder"]
