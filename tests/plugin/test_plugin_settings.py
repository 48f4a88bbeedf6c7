"""Settings precedence and validation (command line > ini > [tool.harness] > defaults), and
adapter specs, as plain functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.settings import Overrides, invariant_ids, resolve, rule_ids
from invariants.adapter_spec import REFERENCE_ADAPTER, AdapterSpecError, load_factory, split_spec
from invariants.checks import CHECK_IDS
from invariants.scan.config import ConfigError


def _pyproject(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.harness]\n" + body, encoding="utf-8")
    return path


def test_defaults_without_a_pyproject(tmp_path: Path) -> None:
    settings = resolve(None, tmp_path, Overrides())
    assert settings.root == tmp_path.absolute()
    assert settings.adapters == (REFERENCE_ADAPTER,)
    assert settings.adapter_origin == "the default adapter"
    assert settings.profile == "ci"
    assert settings.invariants == CHECK_IDS
    assert settings.prove is False
    assert settings.sarif is None and settings.baseline is None
    assert settings.cache_dir == tmp_path.absolute() / ".harness-cache"


def test_the_table_is_read_and_paths_are_relative_to_its_directory(tmp_path: Path) -> None:
    pyproject = _pyproject(tmp_path, (
        'paths = ["src"]\nadapter = "pkg.mesh:make"\nprofile = "dev"\n'
        'invariants = ["inv3", "INV1", "INV3"]\nprove = true\nsarif = "out/h.sarif"\n'
        'baseline = "base.json"\nselect = ["mesh001"]\n'
    ))
    settings = resolve(pyproject, tmp_path / "elsewhere", Overrides())
    assert settings.root == tmp_path.absolute()
    assert settings.paths == ("src",)
    assert settings.adapters == ("pkg.mesh:make",)
    assert settings.adapter_origin == f"{pyproject}: [tool.harness] adapter"
    assert settings.profile == "dev"
    assert settings.invariants == ("INV3", "INV1")  # upper-cased, duplicates dropped, in order
    assert settings.prove is True
    assert settings.sarif == tmp_path / "out" / "h.sarif"
    assert settings.baseline == tmp_path / "base.json"
    assert settings.scan.select == ("MESH001",)


def test_options_override_the_table(tmp_path: Path) -> None:
    pyproject = _pyproject(tmp_path, 'adapter = "pkg.mesh:make"\nprofile = "dev"\nprove = true\n')
    overrides = Overrides(adapters=("other:make",), profile="fuzz", prove=False,
                          invariants=(), select=("MESH004",), sarif=tmp_path / "x.sarif")
    settings = resolve(pyproject, tmp_path, overrides)
    assert settings.adapters == ("other:make",)
    assert settings.adapter_origin == "--harness-adapter"
    assert (settings.profile, settings.prove, settings.invariants) == ("fuzz", False, ())
    assert settings.scan.select == ("MESH004",)
    assert settings.sarif == tmp_path / "x.sarif"


def test_synonyms_are_accepted_once(tmp_path: Path) -> None:
    one = _pyproject(tmp_path, 'hypothesis_profile = "dev"\nsarif_output = "s.sarif"\n')
    settings = resolve(one, tmp_path, Overrides())
    assert (settings.profile, settings.sarif) == ("dev", tmp_path / "s.sarif")
    both = _pyproject(tmp_path, 'profile = "ci"\nhypothesis_profile = "dev"\n')
    with pytest.raises(ConfigError, match=r"hypothesis_profile: given twice \(also as 'profile'\)"):
        resolve(both, tmp_path, Overrides())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("adapter = 3\n", r"\[tool.harness\] adapter: expected a string or an array"),
        ("adapter = []\n", r"\[tool.harness\] adapter: expected at least one"),
        ('adapter = "a:b:c"\n', r"\[tool.harness\] adapter: expected 'module:factory'"),
        ('profile = ""\n', r"\[tool.harness\] profile: expected a non-empty string"),
        ('invariants = "INV1, INV2"\n', r"unknown invariant 'INV1, INV2'"),
        ("prove = 1\n", r"\[tool.harness\] prove: expected true or false"),
        ('sarif = ["a"]\n', r"\[tool.harness\] sarif: expected a non-empty string"),
        ('paths = "src"\n', r"\[tool.harness\] paths: expected an array of strings"),
    ],
)
def test_a_bad_value_names_the_file_and_the_key(tmp_path: Path, body: str, message: str) -> None:
    pyproject = _pyproject(tmp_path, body)
    with pytest.raises(ConfigError, match=message) as caught:
        resolve(pyproject, tmp_path, Overrides())
    assert str(caught.value).startswith(str(pyproject))
    assert "\n" not in str(caught.value)


def test_rule_and_invariant_lists() -> None:
    assert rule_ids("--x", ["mesh001", " MESH004 ", ""]) == ("MESH001", "MESH004")
    with pytest.raises(ConfigError, match="--x: unknown rule id 'MESH9'"):
        rule_ids("--x", ["MESH9"])
    assert invariant_ids("--y", ["none"]) == ()
    assert invariant_ids("--y", ["inv2", "inv2"]) == ("INV2",)
    with pytest.raises(ConfigError, match="--y: unknown invariant 'NONE'"):
        invariant_ids("--y", ["INV1", "none"])


def test_adapter_specs() -> None:
    assert split_spec(" pkg.mod : make ", "o") == ("pkg.mod", "make")
    assert load_factory(REFERENCE_ADAPTER, "o").__name__ == "make_adapter"
    for spec, message in [
        ("nocolon", "o: expected 'module:factory'"),
        (":make", "o: expected 'module:factory'"),
        ("no_such_module_here:make", "o: cannot import module 'no_such_module_here'"),
        ("reference_impl.adapter:nothing", "has no attribute 'nothing'"),
        ("reference_impl.constants:DELIVERY_RETRIES", "is a int, not a callable factory"),
    ]:
        with pytest.raises(AdapterSpecError, match=message):
            load_factory(spec, "o")
