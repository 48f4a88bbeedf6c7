"""M38 refusal-not-found: a dispatch refused during the stop is answered NotFound.

Pre-fix shape (the stop's refusal left unclassified, seed 001's window before it failed
clean): `self.answer_failure(delivery, ErrorType.NOT_FOUND, local=True)` in place of
`ErrorType.SHUTTING_DOWN` in `Router.dispatch`, so a post to a hub that exists, made once
the stop has begun, is answered as if its target did not exist (the DISPATCH_REFUSED record
still says ShuttingDown): the sender takes a live hub for a missing one. Obligation (INV7):
"live targets never answered NotFound".
"""

from __future__ import annotations

from invariants.mutants.patch import Patch

MUTANT = Patch(
    id="M38",
    slug="refusal-not-found",
    shape="a dispatch refused during the stop is answered NotFound, not ShuttingDown",
    path="routing.py",
    site="Router.dispatch",
    before="self.answer_failure(delivery, ErrorType.SHUTTING_DOWN, local=True)",
    after="self.answer_failure(delivery, ErrorType.NOT_FOUND, local=True)",
    kills=("INV7",),
    seeds=("refused-live-hub",),
)
