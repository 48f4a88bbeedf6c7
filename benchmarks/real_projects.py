"""The static scan on real message-passing projects: findings per project and rule.

    python benchmarks/real_projects.py [--keep DIR] [--rules MESH003 MESH004] [PROJECT ...]

Downloads each project's release from PyPI with pip (a wheel where there is one, else the
source archive; nothing is installed, built or imported), unpacks it, scans its Python
files with the default configuration and prints a table of findings per project and rule,
then every finding of the rules asked for (default MESH003 and MESH004), to be read by a
person: a finding is true when the code really re-sends after a timeout or drops a
subscription handle it needs. A script, not a test: it needs the package index and the
projects change between releases.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

from invariants.scan.model import ScanConfig
from invariants.scan.report import finding_line
from invariants.scan.rules import RULES
from invariants.scan.runner import scan

PROJECTS = ("pykka", "dramatiq", "kombu", "nats-py", "aiokafka", "aio-pika", "thespian")


def download(project: str, into: Path) -> Path:
    """The project's newest release, unpacked under `into`."""
    archive_dir = into / "archives" / project
    archive_dir.mkdir(parents=True, exist_ok=True)
    for binary in ("--only-binary=:all:", "--no-binary=:all:"):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", binary,
             project, "-d", str(archive_dir)],
            capture_output=True, text=True, check=False,
        )
        archives = sorted(archive_dir.iterdir())
        if done.returncode == 0 and archives:
            break
    else:
        raise SystemExit(f"{project}: pip download failed: {done.stderr.strip()[-300:]}")
    source = into / "source" / project
    source.mkdir(parents=True, exist_ok=True)
    archive = archives[0]
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            wheel.extractall(source)
    else:
        with tarfile.open(archive) as sdist:
            sdist.extractall(source, filter="data")
    return source


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("projects", nargs="*", default=list(PROJECTS))
    parser.add_argument("--keep", metavar="DIR", help="download into DIR and keep it")
    parser.add_argument("--rules", nargs="*", default=["MESH003", "MESH004"])
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mesh-real-"))
    rules = list(RULES)
    print(f"{'project':<12} {'files':>6} " + " ".join(f"{r:>8}" for r in rules))
    shown = []
    for project in args.projects:
        root = download(project, work)
        result = scan(["."], ScanConfig(), root=root, cache_dir=None)
        counts = Counter(f.rule for f in result.findings)
        print(f"{project:<12} {result.stats.files:>6} "
              + " ".join(f"{counts[r]:>8}" for r in rules))
        shown += [(project, f) for f in result.findings if f.rule in args.rules]
    for project, finding in shown:
        print(f"\n[{project}] {finding_line(finding)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
