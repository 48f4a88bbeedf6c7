"""`python -m harness scan`: the static scan of a tree, with baseline, SARIF and cache."""
