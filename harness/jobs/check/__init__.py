"""`python -m harness check`: the scan, the dynamic invariants and the kill matrix, one report."""
