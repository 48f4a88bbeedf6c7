"""aiomesh's own trace invariants, judged by mesh-harness beside INV1-INV7.

Registered in pyproject.toml (`[tool.harness] invariants`); written against the harness's
public invariant API (`invariants.checks.api`) alone, which the import-linter contract of
pyproject.toml holds them to. This is the repository's tooling, not the mesh: they read
the trace's events (aiomesh's own among them, `aiomesh.turn_started` and
`aiomesh.turn_ended`) and never import the mesh.
"""
