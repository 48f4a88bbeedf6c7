"""The dynamic half: Hypothesis state machines that drive a mesh and check its trace.

- `driver`: `MeshMachine`, the rule bodies, safety after every step, liveness at teardown.
- `plans`: what each check exercises (`PLANS`) and `machine_class`, built from a plan.
- `chooser`: the scripted `Chooser` through which Hypothesis settles every schedule tie.
- `seed_programs`: the seed scenarios as fixed step programs.
- `runner`: `run_invariant` / `run_program`, returning an `Outcome` value.
- `mesh_keys`: the mesh a machine drives as part of its example-database key.
- `profiles` and `database`: the named settings profiles and the example-database spec.
- `report` and `mermaid`: the failure text and its sequence diagram.
"""
