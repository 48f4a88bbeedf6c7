"""mesh-harness: the pytest plugin, CLI and reports."""
