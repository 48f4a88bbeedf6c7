"""mesh-harness: the pytest plugin, CLI and reports."""

# `pytest -p harness` imports this package (the name is also the pytest11 entry point's,
# which pytest then skips); this line makes it load the plugin module itself.
pytest_plugins = ("harness.plugin",)
