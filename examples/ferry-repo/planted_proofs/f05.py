"""f05 (network: partition): an anonymous routed post across an 8000 ms partition."""
from _common import prove

from invariants.adapter import Route
from invariants.trace import MessageClass

POST = [("anonymous", {"message_class": MessageClass.USER, "route": Route.MONOLITH,
                       "sender": "client", "to": "h2"})]
CUT = [("partition", {"to": "h2", "duration_ms": 8000, "one_way": False})]
REST = [("advance", {"ms": 20000, "schedule": []})]
prove("f05", "INV1", POST + CUT + REST, healthy=POST + REST)
