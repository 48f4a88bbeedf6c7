"""Mutation score: an existing engine's mutants of a mesh, each run through the harness.

`engine` wraps Cosmic Ray (operators and occurrences), `triage` reads harness-mutants.toml,
`target` says which mesh is mutated and how it is imported, `evaluate` runs one mutant
through the scan and the invariants (cheapest first), `cache` keeps verdicts by mutant,
source and harness version, `run` samples and fans out, `report` renders the score.
"""
