"""A Cosmic Ray session made by `cosmic-ray init`, filtered and read back by the harness.

No worker runs here: results are written into the session the way Cosmic Ray's workers
write them (the test command's output, its exit as killed or survived), so what is checked
is the harness's side of the contract.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cosmic_ray import work_item as cr
from cosmic_ray.work_db import WorkDB, use_db

from invariants.mutants.score.evaluate import Verdict
from invariants.mutants.score.session import (
    config_text,
    filter_session,
    parse_verdict,
    read_session,
    verdict_line,
)
from invariants.mutants.score.target import MeshTarget, package_sources
from invariants.mutants.score.triage import Triage, parse
from invariants.scan.model import ScanConfig

SOURCE = '''\
from __future__ import annotations


def over(count: int | None, limit: int) -> bool:
    return count is not None and count > limit
'''


def _target(root: Path) -> MeshTarget:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "limits.py").write_text(SOURCE)
    return MeshTarget(package_dir=package, package="pkg", adapter_module="adapter",
                      factory="make_adapter", sources=package_sources(package),
                      files=("limits.py",), scan_config=ScanConfig())


def _session(root: Path, target: MeshTarget, triage: Triage) -> Path:
    config = root / "cr.toml"
    config.write_text(config_text(target, triage, root, command="true", timeout=30,
                                  worker_urls=[]))
    session = root / "session.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "cosmic_ray.cli", "init", str(config), str(session)],
        cwd=root, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    return session


def test_the_verdict_line_round_trips() -> None:
    verdict = Verdict("killed", "INV2", "seed", 1, "INV2: seven attempts", 0.25)
    assert parse_verdict(f"noise\n{verdict_line(verdict)}\n") == verdict
    assert parse_verdict("no verdict here") is None


def test_the_config_is_cosmic_rays_with_the_http_workers_named(tmp_path: Path) -> None:
    target = _target(tmp_path)
    text = config_text(target, Triage(None), tmp_path, command="python -m harness prove "
                       "--mutate --in-place", timeout=60, worker_urls=["http://a:9876"])
    assert 'module-path = ["pkg/limits.py"]' in text
    assert 'test-command = "python -m harness prove --mutate --in-place"' in text
    assert 'name = "http"' in text and 'worker-urls = ["http://a:9876"]' in text


def test_a_session_is_filtered_and_read_back_with_the_harness_verdicts(tmp_path: Path) -> None:
    target = _target(tmp_path)
    triage = parse(tmp_path / "harness-mutants.toml", '''\
[[equivalent]]
path = "limits.py"
function = "over"
operator = "core/ReplaceComparisonOperator_Gt_GtE"
snippet = "return count is not None and count > limit"
occurrence = 0
reason = "a test triage: count never equals limit"
''')
    session = _session(tmp_path, target, triage)
    # The `|` of the postponed annotation and the triaged `>=` are skipped, nothing else.
    marked = filter_session(session, target, triage, tmp_path)
    with use_db(str(session), mode=WorkDB.Mode.open) as db:
        pending = sorted(db.pending_work_items, key=lambda i: i.mutations[0].operator_name)
        total = db.num_work_items
        assert marked >= 2 and len(pending) == total - marked
        gt_to_lt = next(i for i in pending
                        if i.mutations[0].operator_name.endswith("_Gt_Lt"))
        killed = Verdict("killed", "INV9", "seed", 1, "a violation")
        db.set_result(gt_to_lt.job_id, cr.WorkResult(
            worker_outcome=cr.WorkerOutcome.NORMAL, test_outcome=cr.TestOutcome.KILLED,
            output=verdict_line(killed)))
        other = next(i for i in pending if i is not gt_to_lt)
        db.set_result(other.job_id, cr.WorkResult(
            worker_outcome=cr.WorkerOutcome.NORMAL, test_outcome=cr.TestOutcome.KILLED,
            output="timeout"))
        # Skipped by another of Cosmic Ray's filters: neither run nor counted.
        third = next(i for i in pending if i is not gt_to_lt and i is not other)
        db.set_result(third.job_id, cr.WorkResult(worker_outcome=cr.WorkerOutcome.SKIPPED))
    scored = read_session(session, target, triage, tmp_path, "ci")
    statuses = {r.mutant.operator: (r.verdict.status if r.verdict else "equivalent")
                for r in scored.results}
    assert statuses[gt_to_lt.mutations[0].operator_name] == "killed"
    assert statuses[other.mutations[0].operator_name] == "timeout"
    assert statuses["core/ReplaceComparisonOperator_Gt_GtE"] == "equivalent"
    assert len(scored.results) == 3  # pending mutants are not counted
    assert any("annotation" in rule.reason for _m, rule in scored.excluded)
