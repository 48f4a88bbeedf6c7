"""Fuzzing sessions: the invariant state machines under HypoFuzz, sharing one example database.

- `database`: a database SPEC (a directory or a `redis://` URL) opened as a Hypothesis
  example database.
- `config`: what a session fuzzes (adapter or mutant, invariants, database), passed to the
  worker processes through environment variables.
- `targets`: the test module HypoFuzz collects: one state-machine `TestCase` per invariant.
- `session`: runs HypoFuzz in its own process group for at most N minutes, then stops it.
- `schedule`, `sliced_worker`: the harness's schedule across the tests (every worker used,
  each rotating through its tests in time slices), applied to HypoFuzz's hub and workers.
- `hypofuzz_main`: the launcher, which installs the schedule and the changes in
  `invariants.engine_internals` (`replay_alignment`: HypoFuzz replays a recorded choice
  sequence in step with the test's draws, forced ones included, so its re-executions run
  the same program; `coverage_scope`: HypoFuzz's coverage guidance measured on the mesh,
  not the harness). HypoFuzz's names are imported from there, never here.
- `observed`, `goals`, `failures`, `shortfall`, `summary`: what the session ran, reached
  and found, and which selected tests did not get their examples.
"""
