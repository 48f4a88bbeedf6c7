"""Pre-fix mutants M1–M8 of the reference mesh (SPEC §3.3) and the kill matrix.

Each mutant is a libcst codemod of one reference source file (`m1_…` … `m8_…`);
`build.build_mutant` applies it to a copy imported under an isolated package name, and
`matrix.prove` runs the reference and every mutant against every check.
"""
