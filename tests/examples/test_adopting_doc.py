"""docs/adopting.md is reproduced: every output it shows is what its step prints.

The guide marks its blocks: `<!-- pyproject: STATE -->` before the `[tool.harness]` table of
a step, `<!-- output: STATE -->` before the commands of a step and what they print,
`<!-- excerpt: PATH -->` before code quoted from the example, `<!-- patch: BUG -->` before
a planted bug's code, `<!-- shell: NAME -->` before a command the reader runs to get to a
state. Each output block runs in a fresh copy of the example in that state: `final` is the
repository as committed; a `scan-*` state puts the guide's own table in its pyproject
(and, before the suppressions are introduced, runs the guide's own command that takes
them out of the source, as a reader of the guide does); a planted bug's name applies that
bug. Paths and run times are normalised; `...` in a block stands for any lines.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import tinymesh_repo
from planted_bugs import BUGS

DOC = tinymesh_repo.ROOT / "docs" / "adopting.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCK = re.compile(r"<!-- (\w+): ([\w./-]+) -->\n(```|~~~)\w*\n(.*?)\n\3\n", re.DOTALL)
BLOCKS = [(m[1], m[2], m[4]) for m in BLOCK.finditer(TEXT)]
BY_NAME = {bug.name: bug for bug in BUGS}
SUPPRESSION = "# harness: allow[MESH001]"
SHELL = {name: body for kind, name, body in BLOCKS if kind == "shell"}


def _tables() -> dict[str, str]:
    return {name: body + "\n" for kind, name, body in BLOCKS if kind == "pyproject"}


def _prepare(state: str, directory: Path) -> Path:
    repo = tinymesh_repo.copy_to(directory)
    if state in BY_NAME:
        bug = BY_NAME[state]
        tinymesh_repo.patch(repo, bug.path, bug.edits)
    elif state != "final":
        pyproject = repo / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        pyproject.write_text(text[: text.index("[tool.harness]")] + _tables()[state])
        if state in ("scan-defaults", "scan-names"):  # before the suppressions are written
            _unsuppress(repo)
    return repo


def _suppressions(repo: Path) -> list[str]:
    return [f"{source.name}: {line.strip()}" for source in sorted((repo / "src").rglob("*.py"))
            for line in source.read_text(encoding="utf-8").splitlines() if SUPPRESSION in line]


def _unsuppress(repo: Path) -> None:
    """What the guide tells its reader to run before step 2, run as the guide shows it."""
    subprocess.run(["bash", "-c", SHELL["unsuppressed"]], cwd=repo, check=True, timeout=60)


def _segments(block: str) -> list[tuple[str, list[str]]]:
    """Each `$ command` of a block with the lines shown after it."""
    segments: list[tuple[str, list[str]]] = []
    for line in block.split("\n"):
        if line.startswith("$ "):
            segments.append((line[2:], []))
        else:
            segments[-1][1].append(line)
    return segments


def _matches(shown: list[str], actual: list[str]) -> bool:
    """`shown` is `actual`, with each `...` line standing for any run of lines."""
    if not shown:
        return not actual
    if shown[0] == "...":
        return any(_matches(shown[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and shown[0] == actual[0] and _matches(shown[1:], actual[1:])


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "pytest":
        return ["pytest", *words[1:]]
    assert words[:2] == ["python3", "-m"], command
    return words[2:]


OUTPUTS = [(name, body) for kind, name, body in BLOCKS if kind == "output"]


def _slow(block: str) -> bool:
    """A block that starts a pytest session of the example or runs `harness check` on it:
    the slow tier's (the scan's and adapter-check's outputs run by default)."""
    return any(command.startswith("pytest") or "harness check" in command
               for command, _ in _segments(block))


@pytest.mark.parametrize(("state", "block"), [
    pytest.param(state, block, id=f"{i}-{state}",
                 marks=pytest.mark.slow if _slow(block) else ())
    for i, (state, block) in enumerate(OUTPUTS)])
def test_the_output_shown_is_what_the_step_prints(tmp_path: Path, state: str,
                                                  block: str) -> None:
    repo = _prepare(state, tmp_path)
    for command, shown in _segments(block):
        done = tinymesh_repo.run(repo, *_argv(command))
        printed = tinymesh_repo.normalise(done.stdout + done.stderr, repo)
        actual = [*printed.split("\n")[:-1], f"[exit {done.returncode}]"]
        assert _matches(shown, actual), f"$ {command}\n" + "\n".join(actual)


def test_the_guide_shows_every_kind_of_block() -> None:
    kinds = {kind for kind, _, _ in BLOCKS}
    assert kinds == {"output", "pyproject", "excerpt", "patch", "shell"}
    assert len(OUTPUTS) >= 7


def test_step_2_starts_from_the_shipped_example_and_the_guide_s_command(tmp_path: Path) -> None:
    """The example ships with the two suppressions step 2 arrives at (so its scan finds
    nothing to show); the command the guide gives takes out exactly those two comments,
    and nothing else."""
    repo = tinymesh_repo.copy_to(tmp_path)
    shipped = {p: p.read_text(encoding="utf-8") for p in (repo / "src").rglob("*.py")}
    assert len(_suppressions(repo)) == 2
    _unsuppress(repo)
    assert _suppressions(repo) == []
    changed = {p for p, text in shipped.items() if p.read_text(encoding="utf-8") != text}
    assert {p.name for p in changed} == {"letters.py", "harness_adapter.py"}
    for path in changed:
        before, after = shipped[path].splitlines(), path.read_text(encoding="utf-8").splitlines()
        assert len(before) == len(after)
        assert [(b, a) for b, a in zip(before, after, strict=True) if b != a] == [
            (b, b.split("  # harness: allow[MESH001]")[0]) for b in before if SUPPRESSION in b
        ]


def test_the_final_configuration_shown_is_the_examples() -> None:
    pyproject = (tinymesh_repo.EXAMPLE / "pyproject.toml").read_text(encoding="utf-8")
    assert _tables()["final"] == pyproject[pyproject.index("[tool.harness]"):]


def test_the_code_quoted_is_in_the_example() -> None:
    for kind, name, body in BLOCKS:
        if kind == "excerpt":
            assert body in (tinymesh_repo.EXAMPLE / name).read_text(encoding="utf-8"), name
        elif kind == "patch":
            assert body + "\n" == BY_NAME[name].edits[-1][1], name


def test_the_blind_spots_listed_are_the_pinned_ones() -> None:
    listed = set(re.findall(r"^\| `([\w-]+)` \| INV\d", TEXT, flags=re.MULTILINE))
    assert listed == {bug.name for bug in BUGS if not bug.caught}
    caught = [bug for bug in BUGS if bug.caught]
    assert f"them. {_number(len(caught))} are caught," in TEXT.replace("\n", " ")


def test_the_tree_shown_is_the_examples() -> None:
    shown = TEXT.split("```\ntinymesh-repo/\n", 1)[1].split("```", 1)[0]
    names = {line.split()[0] for line in shown.splitlines() if line.strip()}
    sources = {p.name for p in (tinymesh_repo.EXAMPLE / "src" / "tinymesh").glob("*.py")}
    assert sources <= names
    assert {"pyproject.toml", "tests/test_tinymesh.py"} <= names


def _number(n: int) -> str:
    words = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine",
             "Ten", "Eleven", "Twelve", "Thirteen", "Fourteen", "Fifteen")
    return words[n]


def test_the_comparison_fails_on_drift_and_elides_only_where_told() -> None:
    actual = ["a", "b", "c", "[exit 0]"]
    assert _matches(["a", "b", "c", "[exit 0]"], actual)
    assert _matches(["a", "...", "[exit 0]"], actual)
    assert not _matches(["a", "x", "c", "[exit 0]"], actual)  # a drifted line
    assert not _matches(["a", "b", "c"], actual)  # the exit status left out
    assert not _matches(["a", "c", "[exit 0]"], actual)  # a line missing without `...`
    assert not _matches(["a", "...", "[exit 1]"], actual)
