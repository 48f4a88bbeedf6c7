"""The pre-fix mutants, one module each (`mN_<slug>.py`, its `MUTANT` record), registered
in order by `invariants.mutants.registry.MUTANT_MODULES`.

Most are a `Patch` (`invariants.mutants.patch`): one line or expression of their site
replaced by another, said by the record alone. The rest are a `Rewrite` with a codemod
class of its own: an added statement (M9, M41, M42, the last two sharing
`fault_handler_tail`), more than one place changed (M7, M39), a body replaced (M43), an
import added (M2) or an argument a line's text cannot single out (M31).
"""
