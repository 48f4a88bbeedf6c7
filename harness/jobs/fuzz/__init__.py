"""`python -m harness fuzz`: a time-boxed HypoFuzz session over the invariant machines."""
