"""Pre-fix mutants of the reference mesh and the kill matrix.

M1–M8 are the pre-fix shapes the seed write-ups describe; the later ones break the dynamic
checks' other obligations, so every negative control of an invariant is a mutant. Each
mutant rewrites one function of one reference source file with libcst (`catalogue/`, a
module per mutant, registered by one line in `registry.MUTANT_MODULES`): a `patch.Patch`
replaces one line or expression, a `base.Rewrite` brings a codemod of its own;
`build.build_mutant` applies it to a copy imported under an isolated package name, and
`matrix.prove` runs the reference and every mutant against every check.
"""
