"""M15 uncapped-retry-delay: the delivery retry delay keeps doubling past 3 s.

Pre-fix shape (the cap forgotten): `return RETRY_BASE_DELAY_MS * (1 << retry)` in place of
`return min(RETRY_BASE_DELAY_MS * (1 << retry), RETRY_MAX_DELAY_MS)` in `retry_delay_ms`,
so the fifth retry waits 4 s and the sixth 8 s. Obligation: "retry delays timed" (each
retry comes min(250*2^n, 3000) ms after the failure it answers).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import Mutant, MutationCodemod

_CAPPED = m.Return(
    value=m.Call(
        func=m.Name("min"),
        args=[m.Arg(value=m.BinaryOperation()), m.Arg(value=m.Name("RETRY_MAX_DELAY_MS"))],
    )
)


class UncappedRetryDelay(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("retry_delay_ms")))
    @m.leave(_CAPPED)
    def drop_cap(self, original_node: cst.Return, updated_node: cst.Return) -> cst.Return:
        self.hit()
        value = updated_node.value
        assert isinstance(value, cst.Call)  # guaranteed by the matcher
        return updated_node.with_changes(value=value.args[0].value)


MUTANT = Mutant(
    id="M15",
    slug="uncapped-retry-delay",
    shape="retry delays double without the 3 s cap",
    path="constants.py",
    site="retry_delay_ms",
    target="return min(RETRY_BASE_DELAY_MS * (1 << retry), RETRY_MAX_DELAY_MS)",
    kills=("INV4",),
    writes="return RETRY_BASE_DELAY_MS * (1 << retry)",
    removes="return min(RETRY_BASE_DELAY_MS * (1 << retry), RETRY_MAX_DELAY_MS)",
    seeds=("rejection-retry",),
    codemod=UncappedRetryDelay,
)
