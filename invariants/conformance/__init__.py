"""Adapter conformance: does an adapter's trace keep the conventions the checkers read?

`conventions` checks one trace against what the harness did; `programs` drives an adapter
through a short fixed program per declared capability. `python -m harness adapter-check`
prints the result, one line per broken convention.
"""
