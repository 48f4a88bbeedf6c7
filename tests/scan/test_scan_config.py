"""`[tool.harness]` loading: every key maps to a ScanConfig field; every mistake names its key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.cli import main
from invariants.scan.config import ConfigError, find_pyproject, load_config, load_settings
from invariants.scan.model import OptionValue, RuleOptions, ScanConfig
from invariants.scan.options import Names
from invariants.scan.rules import option_table


def write(tmp_path: Path, body: str) -> Path:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(body, encoding="utf-8")
    return pyproject


def test_no_file_and_no_table_give_the_defaults(tmp_path: Path) -> None:
    assert load_config(None) == ScanConfig()
    assert load_config(write(tmp_path, "[project]\nname = 'x'\n")) == ScanConfig()


def test_keys_map_onto_fields(tmp_path: Path) -> None:
    pyproject = write(
        tmp_path,
        "[tool.harness]\n"
        "paths = ['src']\n"
        "guard_functions = ['may_reply']\n"
        "select = ['mesh001', 'MESH004']\n"
        "expected_emit_sites = 7\n"
        "max_file_bytes = 1000\n"
        "baseline = 'scan-baseline.json'\n"
        "adapter = 'mymesh:factory'\n",  # owned by the plugin: skipped here
    )
    settings = load_settings(pyproject)
    assert settings.config == ScanConfig(
        paths=("src",), select=("MESH001", "MESH004"), max_file_bytes=1000,
        options=RuleOptions({"guard_functions": ("may_reply",), "expected_emit_sites": 7}),
    )
    assert settings.baseline == "scan-baseline.json"
    assert settings.source == pyproject


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("colour = 1", "colour: unknown key"),
        ("expected-emit-sites = 3", "did you mean 'expected_emit_sites'?"),
        ("paths = 'src'", "paths: expected an array of strings"),
        ("paths = [1]", "paths: expected an array of strings"),
        ("expected_emit_sites = true", "expected_emit_sites: expected an integer"),
        ("expected_emit_sites = -1", "expected_emit_sites: must be at least 0"),
        ("max_file_bytes = 0", "max_file_bytes: must be at least 1"),
        ("select = ['MESH999']", "select: unknown rule id 'MESH999'"),
        ("ignore = ['nope']", "ignore: unknown rule id 'nope'"),
        ("baseline = 3", "baseline: expected a non-empty string"),
    ],
)
def test_mistakes_are_one_line_naming_file_and_key(
    tmp_path: Path, body: str, expected: str
) -> None:
    pyproject = write(tmp_path, f"[tool.harness]\n{body}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(pyproject)
    message = str(caught.value)
    assert "\n" not in message
    assert str(pyproject) in message
    assert expected in message


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    pyproject = write(tmp_path, "[tool.harness\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(pyproject)


def test_find_pyproject_walks_up(tmp_path: Path) -> None:
    pyproject = write(tmp_path, "")
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert find_pyproject(nested) == pyproject.resolve()


def test_cli_unknown_key_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "[tool.harness]\nguard_fuctions = ['may_answer']\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "--no-cache"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert "pyproject.toml" in lines[0] and "guard_fuctions: unknown key" in lines[0]


def test_cli_valid_config_is_honoured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Negative control for the test above: the same tree with a valid key scans (exit 0),
    # and `paths` from the config decides what is scanned.
    write(tmp_path, "[tool.harness]\npaths = ['src']\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("def (:\n")  # outside `paths`: not scanned
    monkeypatch.chdir(tmp_path)
    assert main(["scan", "--no-cache", "--format", "json"]) == 0
    assert '"files": 1' in capsys.readouterr().out


def toml_value(value: object) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def test_every_field_and_rule_option_is_configurable(tmp_path: Path) -> None:
    # Each field, and each option a rule record declares, written out with a non-default
    # value reads back as exactly that value.
    changed: dict[str, object] = {}
    for field in dataclasses.fields(ScanConfig):
        default = getattr(ScanConfig(), field.name)
        if field.name in ("options", "team_rules"):  # rule options; `rules` (test_team_rules)
            continue
        if field.name in ("select", "ignore"):
            changed[field.name] = ("MESH004",)
        elif isinstance(default, tuple):
            changed[field.name] = (*default, "extra_name")
        else:  # an integer
            changed[field.name] = default + 5
    options: dict[str, OptionValue] = {}
    for key, (_, option) in option_table().items():
        if isinstance(option, Names):
            options[key] = (*option.default, "extra_name")
        else:  # a count, None when unset
            options[key] = (option.default or 0) + 5
    assert "guard_functions" in options and "expected_emit_sites" in options
    lines = [f"{name} = {toml_value(value)}" for name, value in {**changed, **options}.items()]
    pyproject = write(tmp_path, "[tool.harness]\n" + "\n".join(lines) + "\n")
    expected = ScanConfig(**changed, options=RuleOptions(options))  # type: ignore[arg-type]
    assert load_config(pyproject) == expected
    # negative control: the same table without one option reads back different
    lines.pop()
    pyproject = write(tmp_path, "[tool.harness]\n" + "\n".join(lines) + "\n")
    assert load_config(pyproject) != expected


@pytest.mark.parametrize(("key", "hint"), [
    ("guard_fuctions", " (did you mean 'guard_functions'?)"),  # a rule option
    ("adaptor", " (did you mean 'adapter'?)"),  # a plugin key
    ("emit-constructors", " (did you mean 'emit_constructors'?)"),  # kebab case
    ("colour", ""),  # the control: nothing close, no guess
])
def test_an_unknown_key_suggests_the_closest_known_one(
    tmp_path: Path, key: str, hint: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.harness]\n{key} = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path / "pyproject.toml", other_keys=("adapter",))
    assert str(caught.value) == (
        f"{tmp_path / 'pyproject.toml'}: [tool.harness] {key}: unknown key{hint}"
    )
