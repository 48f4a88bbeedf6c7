"""Architecture invariants: static rules, trace checkers, state machines, adapter protocol."""
