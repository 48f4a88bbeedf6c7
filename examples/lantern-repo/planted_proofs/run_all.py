"""Runs every planted_proofs/lNN.py and prints "N of N proven"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    proofs = sorted(HERE.glob("l[0-9][0-9].py"))
    proven = 0
    for proof in proofs:
        done = subprocess.run([sys.executable, str(proof)], cwd=HERE, check=False)
        proven += done.returncode == 0
    print(f"{proven} of {len(proofs)} proven")
    return 0 if proven == len(proofs) else 1


if __name__ == "__main__":
    sys.exit(main())
