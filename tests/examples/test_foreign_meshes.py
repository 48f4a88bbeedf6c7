"""The meshes written from the docs alone by other hands, run as their users run them: a
subprocess in a fresh copy (`example_repos`). examples/switchboard-repo/ and
examples/relaycore-repo/ carry 17 bugs each, planted by a third hand;
examples/courier-repo/ (three nodes over TCP), examples/pigeon-repo/ (three nodes over
UDP, its own acknowledgements and retransmission), examples/ferry-repo/ (three nodes and
a broker over TCP) and examples/lantern-repo/ (three nodes, newline-delimited JSON over
connections dialed lazily and pooled), on the simulated network, carry their authors'
own, sealed until measured.

Their own tests pass; the clean mesh passes `check`, every obligation accounted for; the
planted static bugs live inline behind their switches, so the repository's baseline
accepts exactly them, and the scan without it reports exactly their rules (none, where
none was planted); `check` fails a sample of the planted bugs naming the invariant each
breaks. benchmarks/planted_bugs.py measures every one of them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from example_repos import copy_example, planted, run_in

REPOS = ("switchboard-repo", "relaycore-repo", "courier-repo", "pigeon-repo", "ferry-repo",
         "lantern-repo")

# A sample of each mesh's planted bugs that `check` catches in `ci`: one ordinary bug and
# one same-instant race, or on a networked mesh one that needs a network fault
# (a race `check` catches in its own invariant's run: which ones shifts with the search).
SAMPLE = (("switchboard-repo", "b06"), ("switchboard-repo", "b16"),
          ("relaycore-repo", "b13"), ("relaycore-repo", "b16"),
          ("courier-repo", "c01"), ("courier-repo", "c06"),
          ("pigeon-repo", "p06"), ("pigeon-repo", "p03"),
          ("ferry-repo", "f07"), ("ferry-repo", "f04"),
          ("lantern-repo", "l07"), ("lantern-repo", "l05"))
# Caught by another invariant's run, judged by its own (as `check` finds it): run whole.
WHOLE = {("pigeon-repo", "p06")}


def _check(repo: Path, *args: str) -> dict[str, Any]:
    done = run_in(repo, "harness", "check", "--no-prove", "--format", "json", "--quiet",
                  "--jobs", "1", *args)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_the_sample_names_caught_kinds() -> None:
    for repo in REPOS:
        records = planted(repo)
        kinds = {records[name]["kind"] for each, name in SAMPLE if each == repo}
        assert kinds in ({"ordinary", "race"}, {"ordinary", "network"}), (repo, kinds)


@pytest.mark.parametrize("repo", REPOS)
def test_its_own_tests_pass(tmp_path: Path, repo: str) -> None:
    done = run_in(copy_example(repo, tmp_path), "pytest", "-q", "-p", "no:cacheprovider")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.parametrize("repo", REPOS)
def test_the_scan_without_its_baseline_reports_exactly_the_planted_static_rules(
        tmp_path: Path, repo: str) -> None:
    empty = tmp_path / "empty-baseline.json"
    empty.write_text(json.dumps({"version": 1, "entries": []}), encoding="utf-8")
    done = run_in(copy_example(repo, tmp_path), "harness", "scan", "--format", "json",
                  "--baseline", str(empty))
    static = sorted(b["breaks"] for b in planted(repo).values() if b["kind"] == "static")
    assert done.returncode == (1 if static else 0), done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(f["rule"] for f in json.loads(done.stdout)["findings"]) == static


@pytest.mark.slow
@pytest.mark.parametrize("repo", REPOS)
def test_the_clean_mesh_passes_check_with_every_obligation_accounted_for(
        tmp_path: Path, repo: str) -> None:
    report = _check(copy_example(repo, tmp_path))
    assert report["ok"], report["scan"]
    assert report["scan"]["findings"] == []
    verdicts = {row["check"]: row["verdict"] for row in report["invariants"]}
    assert verdicts == {f"INV{n}": "pass" for n in range(1, 8)}
    unaccounted = [(row["check"], o["obligation"]) for row in report["invariants"]
                   for o in row["obligations"]
                   if not o.get("exercised") and not o.get("not_applicable")]
    assert unaccounted == []


@pytest.mark.slow
@pytest.mark.parametrize(("repo", "name"), SAMPLE)
def test_check_fails_a_planted_bug_naming_its_invariant(tmp_path: Path, repo: str,
                                                        name: str) -> None:
    bug = planted(repo)[name]
    only = () if (repo, name) in WHOLE else ("--invariants", bug["breaks"])
    report = _check(copy_example(repo, tmp_path, bug["factory"]), *only)
    [row] = [row for row in report["invariants"] if row["check"] == bug["breaks"]]
    assert row["verdict"] == "violation", row
    assert row["evidence"].startswith(f"{bug['breaks']}: "), row["evidence"]
