"""The keys of `[tool.harness]` the plugin reads (`harness.settings.PLUGIN_KEYS`) are the
scanner's `OTHER_KEYS`: a pyproject.toml that uses them loads through the scanner's library
API (`load_config`) as it does through the plugin, and a key neither knows is still an
error naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.settings import PLUGIN_KEYS
from invariants.scan.config import OTHER_KEYS, ConfigError, load_config
from invariants.scan.model import ScanConfig

# A valid value for every key the plugin reads.
EVERY_PLUGIN_KEY = """\
adapter = "pkg.mesh:make"
profile = "dev"
invariants = ["INV1"]
prove = true
sarif = "out/h.sarif"
shared_database = "db"
mutate_paths = ["src"]

[tool.harness.params]
response_timeout_ms = 100
"""


def _pyproject(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.harness]\n" + body, encoding="utf-8")
    return path


def test_every_key_the_plugin_reads_is_one_the_scanner_leaves_to_others() -> None:
    assert PLUGIN_KEYS <= OTHER_KEYS


def test_a_pyproject_with_the_plugins_keys_loads_through_the_scanners_api(
    tmp_path: Path,
) -> None:
    assert load_config(_pyproject(tmp_path, EVERY_PLUGIN_KEY)) == ScanConfig()


@pytest.mark.parametrize("key", ["shared_datbase", "paramz"])
def test_control_a_key_no_part_reads_is_one_line_naming_the_file_and_key(
    tmp_path: Path, key: str,
) -> None:
    pyproject = _pyproject(tmp_path, f'{key} = "x"\n')
    with pytest.raises(ConfigError) as raised:
        load_config(pyproject)
    assert str(raised.value).startswith(f"{pyproject}: [tool.harness] {key}: unknown key")
    assert "\n" not in str(raised.value)
