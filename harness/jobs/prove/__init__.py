"""`python -m harness prove`: the kill matrix, every pre-fix mutant against its checks."""
