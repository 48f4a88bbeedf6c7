"""Shared setup of the plugin tests.

pytester's in-process runs drop every module a run imported; importing the plugin's
run-time modules here (Hypothesis and the scanner among them) keeps them loaded across
runs, so each in-process run does not import and assertion-rewrite them again.
"""

import harness.collect
import harness.reporter  # noqa: F401
