"""Invariant rows: built from a run's outcome where it ran, and cross-judged per adapter."""
