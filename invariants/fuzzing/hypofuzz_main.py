"""`python -m invariants.fuzzing.hypofuzz_main [-n K] --no-dashboard -- PYTEST_ARGS`.

HypoFuzz's `hypothesis fuzz` command, run through the current interpreter so a session
uses the same environment as the harness (the `hypothesis` script may belong to another).
"""

from __future__ import annotations

from hypofuzz.entrypoint import fuzz

if __name__ == "__main__":
    fuzz(prog_name="hypothesis fuzz")
