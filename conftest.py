"""Project-wide pytest configuration."""

pytest_plugins = ["pytester"]
