"""Measure the static scan against bare parsing, on the same files, and print the ratios.

    python benchmarks/scan_speed.py [DIR ...] [--limit N] [--repeat R] [--no-stdlib]
                                    [--json FILE]
    python benchmarks/scan_speed.py --verdict N [--seed S]

Files: the running interpreter's standard library without its test folders, a small corpus
of 140 of its files (every n-th, so a short run is measured too), plus every directory given.
Measured in one run: bare `libcst.parse_module`, bare `ast.parse`, a cold scan with all rules
(one process), a cold scan with 2 jobs, and a warm (cached) rescan; then the start-up of
`python -m harness scan` on one file (wall and CPU seconds, best of 5), and a side-by-side
table of the corpora. Goals: cold <= 1.0x bare libcst (on every corpus, small ones too);
2 jobs >= 1.7x faster than 1; warm <= 0.05x cold; start-up <= 0.4 s. The cold line says how
many files libcst parsed: the others no rule needed the tree of. `--json FILE` also writes
the side-by-side table (each corpus: files, seconds, ratio, goal met) and the start-up.
A script, not a test: timings depend on the machine and its load.

`--verdict N` is the long form of tests/scan/test_scan_verdict.py instead: N seeded byte
mutations of standard-library modules (N >= 5000 for the documented run), each analysed
and compared with CPython's compile() verdict (MESH000 exactly when compile rejects); it
prints the number of disagreements, which should be 0.

`--memory BYTES` instead builds a file of about BYTES from standard-library modules and
prints the peak RSS of analysing it in a fresh process (goal <= 300 MB at the default
`max_file_bytes`).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import random
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst

from invariants.scan.engine import analyze_source
from invariants.scan.files import SourceFile, discover
from invariants.scan.model import ScanConfig
from invariants.scan.runner import ScanResult, scan

# The stdlib's test folders (and installed packages), relative to the stdlib directory.
STDLIB_EXCLUDES = (
    "test/*", "*/test/*", "tests/*", "*/tests/*", "idlelib/idle_test/*", "lib2to3/tests/*",
    "site-packages/*", "dist-packages/*", "*/__pycache__/*",
)


SMALL_CORPUS = 140
COLD_GOAL = 1.0  # cold scan / bare libcst parse of the same files


def source_files(
    root: Path, config: ScanConfig, limit: int | None, every: int | None = None
) -> list[SourceFile]:
    files = discover(["."], config, root).files
    if every:  # an even spread over the tree, not its first directory
        files = files[:: max(1, len(files) // every)][:every]
    return files[:limit] if limit else files


def startup(repeat: int = 5) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m harness scan --no-cache` on a one-line file, best
    of `repeat`; CPU counts the worker process too."""
    wall = cpu = float("inf")
    with tempfile.TemporaryDirectory(prefix="scan-startup-") as scratch:
        (Path(scratch) / "a.py").write_text("x = 1\n")
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        for _ in range(repeat):
            before = os.times()
            started = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "harness", "scan", "--no-cache", "a.py"],
                cwd=scratch, env=env, capture_output=True, check=False,
            )
            wall = min(wall, time.perf_counter() - started)
            after = os.times()
            cpu = min(cpu, after.children_user + after.children_system
                      - before.children_user - before.children_system)
    return wall, cpu


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    files: int
    bare_cst: float
    cold: float


def time_parser(files: Sequence[SourceFile], parse: Callable[[bytes], object]) -> float:
    started = time.perf_counter()
    for file in files:
        try:
            with open(file.location, "rb") as handle:
                parse(handle.read())
        except Exception:  # a file the parser rejects still cost its parse
            continue
    return time.perf_counter() - started


def timed_scan(
    root: Path, files: Sequence[SourceFile], config: ScanConfig, jobs: int, cache: Path
) -> tuple[float, float, ScanResult]:
    """(wall seconds, CPU seconds of this process and its workers, result)."""
    before = os.times()
    started = time.perf_counter()
    result = scan([f.path for f in files], config, root=root, jobs=jobs, cache_dir=cache)
    wall = time.perf_counter() - started
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])  # user + system, own and children's
    return wall, cpu, result


def _spin(rounds: int) -> int:
    total = 0
    for number in range(rounds):
        total += number
    return total


def machine_parallelism(rounds: int = 20_000_000) -> float:
    """How much more CPU-bound work 2 processes finish than 1 in the same time, right now:
    2.0 on two idle cores; about 1.0 when other load leaves only one core's worth."""

    def run(processes: int) -> float:
        with ProcessPoolExecutor(max_workers=processes) as pool:
            list(pool.map(_spin, [1] * processes))  # start the workers before timing
            started = time.perf_counter()
            list(pool.map(_spin, [rounds] * processes))
            return time.perf_counter() - started

    one = run(1)
    return 2 * one / run(2)


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def measure(
    root: Path, config: ScanConfig, limit: int | None, repeat: int, every: int | None = None
) -> Row:
    files = source_files(root, config, limit, every)
    size = sum(os.path.getsize(f.location) for f in files)
    name = f"{root} ({every} files)" if every else str(root)
    print(f"== {name}: {len(files)} files, {size / 1e6:.1f} MB, best of {repeat}")
    # Rounds interleave the five measurements, so load from other processes hits them alike;
    # each figure is the best round.
    bare_ast = bare_cst = cold = cold2 = warm = float("inf")
    parallelism = 0.0
    same = True
    for _ in range(repeat):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # stdlib files with invalid escapes warn under ast
            bare_ast = min(bare_ast, time_parser(files, ast.parse))
        bare_cst = min(bare_cst, time_parser(files, libcst.parse_module))
        with tempfile.TemporaryDirectory(prefix="scan-speed-") as scratch:
            one_cache, two_cache = Path(scratch) / "one", Path(scratch) / "two"
            seconds, _, result = timed_scan(root, files, config, 1, one_cache)
            cold = min(cold, seconds)
            seconds, cpu, result2 = timed_scan(root, files, config, 2, two_cache)
            if seconds < cold2:
                cold2, parallelism = seconds, cpu / seconds
            seconds, _, warm_result = timed_scan(root, files, config, 1, one_cache)
            warm = min(warm, seconds)
        same = same and result.findings == result2.findings == warm_result.findings
    print(f"bare ast.parse        {bare_ast:8.2f} s")
    print(f"bare libcst parse     {bare_cst:8.2f} s")
    print(f"cold scan, 1 job      {cold:8.2f} s  ({result.stats.parsed} analysed, "
          f"{result.stats.cst_parsed} parsed by libcst, {len(result.findings)} findings, "
          f"{len(result.emit_sites)} emit sites)")
    # Below 2, other load on the machine kept the two workers from running side by side.
    print(f"cold scan, 2 jobs     {cold2:8.2f} s  (CPU-seconds per second: {parallelism:.2f})")
    print(f"warm rescan, 1 job    {warm:8.2f} s  ({warm_result.stats.cached} cached)")
    print(f"same findings in all three scans: {same}")
    cold_ratio, speedup, warm_ratio = cold / bare_cst, cold / cold2, warm / cold
    print(f"cold / bare libcst    {cold_ratio:6.2f}x  goal <= {COLD_GOAL}x   "
          f"{verdict(cold_ratio <= COLD_GOAL)}")
    print(f"1 job / 2 jobs        {speedup:6.2f}x  goal >= 1.7x   {verdict(speedup >= 1.7)}")
    capacity = machine_parallelism()
    print(f"  (this machine now runs 2 CPU-bound processes {capacity:.2f}x as fast as 1, "
          f"so 2 jobs reached {speedup / capacity:.0%} of what it allows)")
    print(f"warm / cold           {warm_ratio:6.3f}x  goal <= 0.05x  {verdict(warm_ratio <= 0.05)}")
    print(f"(ast.parse / libcst   {bare_ast / bare_cst:6.2f}x, for scale)")
    return Row(name, len(files), bare_cst, cold)


_MUTATION_BYTES = b"()[]{}:'\"\\\t \n\r#=*@\xff\xef\xbb\xbf\x00abc0"


def mutate(source: bytes, rng: random.Random) -> bytes:
    """One to three random byte edits (replace, insert, delete) from bytes that matter to
    Python's grammar and to decoding."""
    data = bytearray(source)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(data) + 1)
        action = rng.randrange(3)
        if action == 0 and at < len(data):
            data[at] = rng.choice(_MUTATION_BYTES)
        elif action == 1:
            data[at:at] = bytes([rng.choice(_MUTATION_BYTES)])
        elif at < len(data):
            del data[at]
    return bytes(data)


def cpython_rejects(source: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "mutated.py", "exec", dont_inherit=True)  # compiled, never run
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return True
    return False


def verdict_agreement(count: int, seed: int) -> int:
    """Disagreements between MESH000 and compile() on `count` mutated stdlib modules."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.glob("**/*.py") if "test" not in p.parts)
    files = [p for p in files if p.stat().st_size < 200_000]
    rng = random.Random(seed)
    config = ScanConfig()
    rejected = not_analysed = disagreements = 0
    started = time.perf_counter()
    for index in range(count):
        path = files[rng.randrange(len(files))]
        source = mutate(path.read_bytes(), rng)
        refused = cpython_rejects(source)
        report = analyze_source("mutated.py", source, config, is_test=False)
        reported = any(f.rule == "MESH000" for f in report.findings)
        rejected += refused
        not_analysed += bool(report.problems)
        if reported != refused:
            disagreements += 1
            print(f"disagreement #{disagreements}: {path} (mutation {index}): "
                  f"compile {'rejects' if refused else 'accepts'}, MESH000 {reported}")
    print(f"== verdict: {count} mutated stdlib modules (seed {seed}) in "
          f"{time.perf_counter() - started:.0f} s: {rejected} rejected by CPython, "
          f"{not_analysed} not analysed, {disagreements} disagreements (goal 0)")
    return disagreements


_RSS_PROBE = """
import resource, sys
from invariants.scan.engine import analyze_source
from invariants.scan.model import ScanConfig
source = open(sys.argv[1], "rb").read()
config = ScanConfig(max_file_bytes=max(len(source), 1))
report = analyze_source("big.py", source, config, is_test=False)
print(report.parsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_rss(size: int) -> None:
    """Peak RSS of analysing one file of about `size` bytes of real code."""
    root = Path(sysconfig.get_paths()["stdlib"])
    data = bytearray()
    for path in sorted(root.glob("*.py")):
        chunk = path.read_bytes()
        if b"__future__" in chunk or cpython_rejects(chunk) or len(data) + len(chunk) > size:
            continue  # a __future__ import must come first: leave those out
        data += chunk + b"\n"
    with tempfile.TemporaryDirectory(prefix="scan-rss-") as scratch:
        big = Path(scratch) / "big.py"
        big.write_bytes(bytes(data))
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        done = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(big)], env=env,
                              capture_output=True, text=True, check=True)
    parsed, kilobytes = done.stdout.split()
    megabytes = int(kilobytes) / 1024
    print(f"== memory: one file of {len(data) / 1e6:.2f} MB (parsed: {parsed}): peak RSS "
          f"{megabytes:.0f} MB, {megabytes * 2**20 / len(data):.0f} bytes per source byte; "
          f"goal <= 300 MB at the default max_file_bytes={ScanConfig().max_file_bytes}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("dirs", nargs="*", type=Path, help="more directories to measure")
    parser.add_argument("--limit", type=int, default=None, help="only the first N files of each")
    parser.add_argument("--no-stdlib", action="store_true", help="skip the standard library")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best is reported")
    parser.add_argument("--verdict", type=int, default=0, metavar="N",
                        help="instead: compare MESH000 with compile() on N mutated modules")
    parser.add_argument("--seed", type=int, default=0, help="seed of the --verdict mutations")
    parser.add_argument("--memory", type=int, default=0, metavar="BYTES",
                        help="instead: peak RSS of analysing one file of about BYTES")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write the side-by-side table and the start-up as JSON")
    args = parser.parse_args(argv)
    if args.memory:
        peak_rss(args.memory)
        return 0
    if args.verdict:
        return 1 if verdict_agreement(args.verdict, args.seed) else 0
    default = ScanConfig()
    rows: list[Row] = []
    repeat = max(1, args.repeat)
    if not args.no_stdlib:
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        config = dataclasses.replace(default, exclude=default.exclude + STDLIB_EXCLUDES)
        rows.append(measure(stdlib, config, args.limit, repeat))
        rows.append(measure(stdlib, config, args.limit, repeat, every=SMALL_CORPUS))
    for directory in args.dirs:
        rows.append(measure(directory.absolute(), default, args.limit, repeat))
    wall, cpu = startup()
    print(f"== start-up, one file: {wall:.2f} s wall, {cpu:.2f} s CPU  goal <= 0.4 s   "
          f"{verdict(min(wall, cpu) <= 0.4)}")
    print("== side by side (cold scan, 1 job, against bare libcst on the same files)")
    print(f"{'corpus':60} {'files':>6} {'libcst s':>9} {'cold s':>8} {'ratio':>6}")
    for row in rows:
        ratio = row.cold / row.bare_cst
        print(f"{row.name[-60:]:60} {row.files:6} {row.bare_cst:9.2f} {row.cold:8.2f} "
              f"{ratio:5.2f}x {verdict(ratio <= COLD_GOAL)}")
    if args.json is not None:
        corpora = [{**dataclasses.asdict(row), "ratio": row.cold / row.bare_cst,
                    "goal_met": row.cold / row.bare_cst <= COLD_GOAL} for row in rows]
        args.json.write_text(json.dumps({
            "cold_goal": COLD_GOAL, "limit": args.limit, "repeat": repeat, "corpora": corpora,
            "startup": {"wall_seconds": wall, "cpu_seconds": cpu, "goal_seconds": 0.4},
        }, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
