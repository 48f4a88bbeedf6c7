"""`python -m harness adapter-check`: does the configured adapter keep the trace conventions?"""
