"""M47 timeout-read-at-the-root: an answer's error is classified by the root exception only.

Pre-fix shape (seed 000's: the fault read off the first link, not the whole graph):
`isinstance(exc, TimeoutError)` in place of `is_timeout(exc)` in `classify`, so a call that
failed with an aggregate of a response timeout and a refusal (two transports) is answered
Unavailable, a transient error, though it timed out and is never sent again: its sender is
armed to try again against a target that may be wedged. The retry ladder still walks the
graph, so nothing is re-sent. Obligation (INV4): "timed-out deliveries answered as
terminal", caught by the `aggregate` seed program.
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M47",
    slug="timeout-read-at-the-root",
    shape="an answer's error is classified by the root exception only: an aggregate that "
    "timed out is answered Unavailable, a transient error",
    path="ladder.py",
    site="classify",
    before="if is_timeout(exc):",
    after="if isinstance(exc, TimeoutError):",
    kills=("INV4",),
    seeds=("aggregate",),
)
