"""tinymesh: a small message mesh in virtual time.

Mailboxes serve one letter per turn; couriers carry routed letters as counted legs; a
letter that cannot be delivered is answered once with a `Bounce`, unless `can_reply()`
says it must not be; a watch (bounded subscribe) gives up after a few tries; a graceful
stop holds its serving stage until the legs in flight have landed.
"""

from tinymesh.mesh import TinyMesh

__all__ = ["TinyMesh"]
