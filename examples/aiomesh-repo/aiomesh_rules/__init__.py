"""aiomesh's own static rules, run by mesh-harness's scan beside its MESH rules.

Registered in pyproject.toml (`[tool.harness] rules`); written against the harness's
public rule API (`invariants.scan.api`) alone, which the import-linter contract of
pyproject.toml holds them to. This is the repository's tooling, not the mesh: the scan
imports it, and never imports the mesh's code it reads.
"""
