"""python3 -m nodemesh demo"""

from __future__ import annotations

import argparse

from .demo import main as demo_main


def main() -> int:
    parser = argparse.ArgumentParser(prog="python3 -m nodemesh")
    parser.add_argument("command", choices=["demo"], help="demo: three nodes on 127.0.0.1")
    parser.parse_args()
    return demo_main()


if __name__ == "__main__":
    raise SystemExit(main())
