"""M43 full-breaker-refuses-fresh-keys: a breaker holding its bound of keys drops new ones.

Pre-fix shape (a bounded table that refuses instead of evicting): once the breaker tracks
`max_keys` keys (10,000), `StormBreaker.admit` returns "not admitted" for every key it has
not seen instead of evicting the key idle the longest, so a fan-out wider than the bound
loses every post past it, each on a key with one message. Obligation (INV6): "fan-out posts
past the threshold kept", caught by the `fanout-past-key-bound` seed program.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from invariants.mutants.base import MutationCodemod, Rewrite

_TABLE_FULL = m.If(test=m.Comparison(
    left=m.Call(func=m.Name("len")),
    comparisons=[m.ComparisonTarget(operator=m.GreaterThanEqual(),
                                    comparator=m.Attribute(attr=m.Name("max_keys")))],
))


class FullBreakerRefusesFreshKeys(MutationCodemod):
    @m.call_if_inside(m.FunctionDef(name=m.Name("admit")))
    @m.leave(_TABLE_FULL)
    def refuse(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        self.hit()
        refused = cst.parse_statement("return False, False")
        return updated_node.with_changes(body=cst.IndentedBlock(body=[refused]))


MUTANT = Rewrite(
    id="M43",
    slug="full-breaker-refuses-fresh-keys",
    shape="a breaker holding its bound of tracked keys drops every fresh key instead of "
    "evicting the one idle the longest",
    path="breaker.py",
    site="StormBreaker.admit",
    target="if len(windows) >= self.max_keys: ... ordered.popitem(last=False)",
    kills=("INV6",),
    writes="return False, False",
    removes="ordered.popitem(last=False)",
    seeds=("fanout-past-key-bound",),
    drawn_blind="a drawn fan-out posts at most threshold + 51 identities: one past the "
    "10,000-key bound costs some 11,000 posts, a third more INV6 time drawn in every run",
    codemod=FullBreakerRefusesFreshKeys,
)
