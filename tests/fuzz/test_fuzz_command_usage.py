"""`python -m harness fuzz` refuses bad input with one line naming it, before any session."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("hypofuzz", reason="needs the fuzz extra: pip install -e '.[fuzz]'")

from harness.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--adapter", "reference_impl.adapter:make_adapter", "--mutant", "M2"],
         "--adapter and --mutant exclude each other"),
        (["--database", "ftp://somewhere/db"], "'ftp://somewhere/db': unsupported URL scheme"),
        (["--invariant", "INV42"], "--invariant: unknown invariant 'INV42'"),
        (["--mutant", "M99"], "unknown mutant 'M99'"),
        (["--adapter", "no_such_module_xyz:make"], "cannot import module 'no_such_module_xyz'"),
    ],
)
def test_bad_input_is_one_error_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["fuzz", "--minutes", "0.1", "--session-dir", str(tmp_path / "s"), *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and err.startswith("mesh-harness fuzz: error: ")
    assert message in err


@pytest.mark.parametrize("minutes", ["0", "-1", "soon"])
def test_the_time_box_must_be_a_positive_number(
    minutes: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["fuzz", "--minutes", minutes])
    assert exit_info.value.code == 2
    assert "--minutes" in capsys.readouterr().err


def test_workers_must_be_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["fuzz", "--workers", "0"])
    assert "must be at least 1" in capsys.readouterr().err


def test_an_adapter_that_raises_on_import_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "exploding_adapter.py").write_text("raise RuntimeError('boom\\nmore')\n", "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["fuzz", "--adapter", "exploding_adapter:make", "--minutes", "0.1",
                 "--database", str(tmp_path / "db"), "--session-dir", str(tmp_path / "s")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == ("mesh-harness fuzz: error: --adapter: "
                   "importing 'exploding_adapter' raised RuntimeError: boom")


def test_min_examples_must_be_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["fuzz", "--min-examples", "0"])
    assert exit_info.value.code == 2
    assert "--min-examples" in capsys.readouterr().err
