"""The one base of every error in what the user gave the harness.

A setting, option, spec or file the harness cannot use (a `[tool.harness]` key, a rule or
invariant id, an adapter spec, a database SPEC, a baseline or triage file, a missing
optional engine) is a `UserError` whose message is one line naming it. Every entry point
maps it in one place: `mesh-harness <cmd>: error: <message>` and exit 2 (`harness.cli`),
and a usage error naming it in a `pytest -p harness` run (`harness.plugin`).

Beside the layers, like `invariants.interrupts`: it imports nothing, and every layer may
raise one.
"""

from __future__ import annotations


class UserError(Exception):
    """Something the user gave that the harness cannot use; the message is one line."""
