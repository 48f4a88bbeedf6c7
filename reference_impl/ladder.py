"""The retry ladder: three nested predicates over an exception graph.

    is_transient   "is another attempt conceivable?"       timeout, rejection, directory unstable
      ⊇ is_resendable  "may we send this request again?"    transient, no timeout anywhere
          ⊇ classify == ShuttingDown  "should the sender keep recovering?"

A timeout means the callee accepted the call and still holds it: re-sending duplicates it.
Non-idempotent retries gate on `is_resendable`; the idempotent attach may use `is_transient`.
"""

from __future__ import annotations

from reference_impl.errors import (
    DirectoryUnstableError,
    RejectionError,
    ShuttingDownError,
    TargetNotFoundError,
    graph_contains,
)
from reference_impl.messages import ErrorType

TRANSIENT_KINDS: tuple[type[BaseException], ...] = (
    TimeoutError, RejectionError, DirectoryUnstableError,
)


def is_timeout(exc: BaseException) -> bool:
    """A timeout anywhere in the graph."""
    return graph_contains(exc, (TimeoutError,))


def is_transient(exc: BaseException) -> bool:
    return graph_contains(exc, TRANSIENT_KINDS)


def is_resendable(exc: BaseException) -> bool:
    return is_transient(exc) and not is_timeout(exc)


def classify(exc: BaseException) -> ErrorType:
    """The error type the sender is answered with. A timeout is terminal (Failed): telling
    a consumer "transient" would arm a resubscribe against a plausibly wedged target."""
    if is_timeout(exc):
        return ErrorType.FAILED
    if graph_contains(exc, (ShuttingDownError,)):
        return ErrorType.SHUTTING_DOWN
    if graph_contains(exc, (TargetNotFoundError,)):
        return ErrorType.NOT_FOUND
    if graph_contains(exc, (RejectionError, DirectoryUnstableError)):
        return ErrorType.UNAVAILABLE
    return ErrorType.FAILED
