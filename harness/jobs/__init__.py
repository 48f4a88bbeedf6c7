"""The jobs `python -m harness` runs: `check`, `scan`, `prove`, `fuzz`, one package each.

Each job's `command` module registers its parser (`add_parser(subparsers)`, setting `func`,
args -> exit code). Jobs share the settings (`harness.settings`) and the libraries below
them, never each other's modules (an import-linter contract).
"""
