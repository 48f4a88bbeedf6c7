"""`python -m invariants.fuzzing.hypofuzz_main [-n K] --no-dashboard -- PYTEST_ARGS`.

HypoFuzz's `hypothesis fuzz` command, run through the current interpreter so a session
uses the same environment as the harness (the `hypothesis` script may belong to another),
with the harness's changes installed at import, so a worker started by `spawn` (which
imports this module again) has them too:

- the harness's schedule across the tests (`sliced_worker`: the hub's assignment, kept
  alive until the workers report, and workers rotating through their tests in slices);
- the replay of a recorded choice sequence in step with the test's draws
  (`invariants.engine_internals.replay_alignment`), without which HypoFuzz's coverage
  guidance keeps nothing;
- coverage measured on the mesh, not on the harness's own code
  (`invariants.engine_internals.coverage_scope`), which
  nearly doubles the examples a session runs.
"""

from __future__ import annotations

from invariants.engine_internals.coverage_scope import measure_the_mesh_only
from invariants.engine_internals.replay_alignment import align_replayed_choices
from invariants.fuzzing import sliced_worker, startup


def install_fixes() -> None:
    sliced_worker.install()
    align_replayed_choices()
    measure_the_mesh_only()


if __name__ in ("__main__", "__mp_main__"):  # the launcher, or a worker it spawned
    install_fixes()

if __name__ == "__main__":
    from invariants.engine_internals.hypofuzz_private import fuzz_main

    startup.mark(startup.HUB_IMPORTED)
    fuzz_main(prog_name="hypothesis fuzz")
