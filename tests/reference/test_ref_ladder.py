"""The retry ladder and the exception-graph walk (seed 000: a timeout anywhere in the graph
means the callee still holds the call)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reference_impl.errors import (
    DirectoryUnstableError,
    RejectionError,
    ResponseTimeout,
    ShuttingDownError,
    TargetNotFoundError,
    walk_exception_graph,
)
from reference_impl.ladder import classify, is_resendable, is_timeout, is_transient
from reference_impl.messages import ErrorType

LEAVES = (
    ResponseTimeout, RejectionError, ShuttingDownError, DirectoryUnstableError,
    TargetNotFoundError, ValueError,
)


def _group(*excs: Exception) -> ExceptionGroup[Exception]:
    return ExceptionGroup("two transports", list(excs))


def test_a_rejection_is_resendable_a_timeout_is_not() -> None:
    assert is_transient(RejectionError()) and is_resendable(RejectionError())
    assert is_transient(ResponseTimeout()) and not is_resendable(ResponseTimeout())
    assert is_transient(DirectoryUnstableError()) and is_resendable(DirectoryUnstableError())
    assert not is_transient(TargetNotFoundError())


def test_a_timeout_anywhere_in_an_aggregate_counts_whatever_its_index() -> None:
    for group in (_group(ResponseTimeout(), RejectionError()),
                  _group(RejectionError(), ResponseTimeout())):
        assert is_timeout(group)
        assert not is_resendable(group)
        assert classify(group) is ErrorType.FAILED


def test_a_timeout_behind_a_cause_chain_or_a_context_counts() -> None:
    outer = RejectionError("outer")
    outer.__cause__ = ValueError("middle")
    outer.__cause__.__context__ = ResponseTimeout("inner")
    assert is_timeout(outer) and not is_resendable(outer)


def test_negative_control_a_first_chain_walker_misses_index_one() -> None:
    """An inner-exception-only walk sees index 0 alone: it would call this resendable."""
    group = _group(RejectionError(), ResponseTimeout())
    first_only = group.exceptions[0]
    assert is_resendable(first_only)
    assert not is_resendable(group)


def test_the_walk_is_cycle_safe_and_capped() -> None:
    a, b = RejectionError("a"), RejectionError("b")
    a.__cause__, b.__cause__ = b, a
    assert len(list(walk_exception_graph(a))) == 2
    wide = ExceptionGroup("wide", [ValueError(str(i)) for i in range(1_000)])
    assert len(list(walk_exception_graph(wide))) == 256


def test_classify() -> None:
    assert classify(ShuttingDownError()) is ErrorType.SHUTTING_DOWN
    assert classify(TargetNotFoundError()) is ErrorType.NOT_FOUND
    assert classify(RejectionError()) is ErrorType.UNAVAILABLE
    assert classify(ResponseTimeout()) is ErrorType.FAILED
    assert classify(ValueError()) is ErrorType.FAILED


def _graphs() -> st.SearchStrategy[BaseException]:
    leaves = st.sampled_from(LEAVES).map(lambda cls: cls())

    def extend(children: st.SearchStrategy[BaseException]) -> st.SearchStrategy[BaseException]:
        groups = st.lists(children, min_size=1, max_size=3).map(
            lambda xs: ExceptionGroup("g", [x for x in xs if isinstance(x, Exception)] or [
                ValueError()])
        )
        caused = st.tuples(leaves, children).map(_with_cause)
        return groups | caused

    return st.recursive(leaves, extend, max_leaves=12)


def _with_cause(pair: tuple[BaseException, BaseException]) -> BaseException:
    outer, cause = pair
    outer.__cause__ = cause
    return outer


@given(_graphs())
def test_the_predicates_nest(exc: BaseException) -> None:
    """is_transient ⊇ is_resendable ⊇ classify == ShuttingDown, on any graph."""
    if classify(exc) is ErrorType.SHUTTING_DOWN:
        assert is_resendable(exc)
    if is_resendable(exc):
        assert is_transient(exc)
        assert not is_timeout(exc)
