"""Fuzzing sessions: the invariant state machines under HypoFuzz, sharing one example database.

- `database`: a database SPEC (a directory or a `redis://` URL) opened as a Hypothesis
  example database.
- `config`: what a session fuzzes (adapter or mutant, invariants, database), passed to the
  worker processes through environment variables.
- `targets`: the test module HypoFuzz collects: one state-machine `TestCase` per invariant.
- `session`: runs HypoFuzz in its own process group for at most N minutes, then stops it.
- `observed`, `goals`, `failures`, `summary`: what the session reached and found.
"""
