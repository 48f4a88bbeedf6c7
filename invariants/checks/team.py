"""Team invariants: the checkers a repository registers in `[tool.harness] invariants`.

An entry `module:attribute` names a checker written against `invariants.checks.api` (a
`Monitor` subclass, by hand or made by `invariant(...)` from the combinators), imported as
every team module is (`invariants.team_modules`). Registered, it is an invariant like
INV1–INV7: an id every entry point accepts, a machine that draws every rule family the
adapter offers, a judge on every run. Every problem is a `TeamInvariantError` naming the
spec; the settings add the file and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

from invariants import team_modules
from invariants.checks import CHECK_IDS, CHECKS, Monitor
from invariants.team_modules import TeamModuleError

KEY = "invariants"
# The built-in invariants' prefix: a team's ids are its own.
RESERVED_PREFIX = "INV"
# Upper-case letters (a team's prefix), then digits, as a team rule's id.
_ID = re.compile(r"[A-Z][A-Z_]*[0-9]+")
_EXAMPLE = "mymesh_invariants.leases:LEASES_RELEASED"
# id -> the spec that registered it (for a duplicate's error line) and its module.
_SPECS: dict[str, str] = {}
_MODULES: dict[str, ModuleType] = {}


class TeamInvariantError(TeamModuleError):
    """An `invariants` entry that cannot be used; the message names the spec."""


def is_spec(entry: str) -> bool:
    """Whether an `invariants` entry names a team's checker (`module:attribute`), not an id."""
    return ":" in entry


def load(spec: str, search: Sequence[Path] = ()) -> type[Monitor]:
    """The checker `spec` names, imported from `search` first, checked and registered
    (again: a no-op). Raises `TeamInvariantError`."""
    try:
        module, value = team_modules.load(spec, _EXAMPLE, search)
    except TeamModuleError as exc:
        raise TeamInvariantError(str(exc)) from None
    if not (isinstance(value, type) and issubclass(value, Monitor)):
        raise TeamInvariantError(
            f"{spec!r}: is a {type(value).__name__}, not an invariant (a Monitor subclass, "
            "e.g. one made by invariants.checks.api.invariant(...))")
    _check_record(spec, value)
    _register(spec, value)
    _MODULES[value.check_id] = module
    return value


def _check_record(spec: str, checker: type[Monitor]) -> None:
    check_id = getattr(checker, "check_id", None)
    if not isinstance(check_id, str) or not _ID.fullmatch(check_id):
        raise TeamInvariantError(f"{spec!r}: invariant id {check_id!r} must be upper-case "
                                 "letters, then digits (e.g. LEASE1)")
    if check_id.startswith(RESERVED_PREFIX):
        raise TeamInvariantError(f"{spec!r}: invariant id {check_id!r} has the prefix "
                                 f"{RESERVED_PREFIX}, which is the harness's own: choose a "
                                 "prefix of your team's (e.g. LEASE1)")
    title = getattr(checker, "title", None)
    if not isinstance(title, str) or not title.strip():
        raise TeamInvariantError(f"{spec!r}: invariant {check_id} has no title (a class "
                                 "attribute: one line saying what it holds the mesh to)")
    obligations = checker.obligations
    if not isinstance(obligations, Mapping) or not obligations or not all(
            isinstance(name, str) and isinstance(cause, str)
            for name, cause in obligations.items()):
        raise TeamInvariantError(f"{spec!r}: invariant {check_id} names no obligations (a "
                                 "mapping: obligation -> the likely cause when a run never "
                                 "exercised it); without one no run can show it holds")


def _register(spec: str, checker: type[Monitor]) -> None:
    check_id = checker.check_id
    existing = CHECKS.get(check_id)
    if existing is checker:
        return
    if existing is not None:
        also = "a built-in invariant" if check_id in CHECK_IDS else _SPECS.get(check_id, "")
        raise TeamInvariantError(f"{spec!r}: duplicate invariant id {check_id!r} "
                                 f"(also {also or 'registered'})")
    CHECKS[check_id] = checker
    _SPECS[check_id] = repr(spec)


def fingerprint(check_ids: Sequence[str]) -> str:
    """A digest of the team invariants among `check_ids` and their modules' files ("" with
    none): what a cached verdict of theirs depends on besides the harness's own code."""
    team = [check for check in check_ids if check in _MODULES]
    if not team:
        return ""
    return team_modules.fingerprint([_SPECS[check] for check in team],
                                    [_MODULES[check] for check in team])
