"""Team rules: the `Rule` records a repository registers in `[tool.harness] rules`.

Each entry is a `module:attribute` spec naming a record written against
`invariants.scan.api`. The module is the team's own tooling, imported from its repository
(the pytest `pythonpath` directories and the repository root, searched first, then the
installed packages); the code a scan reads is still never imported. Every problem with a
spec is a `TeamRuleError` naming it; the configuration loader adds the file and the key.

The records' source is hashed (every `.py` file of each rule module's top-level package, or
the module's own file), so editing a rule invalidates the scan cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

from invariants.scan.model import ScanConfig, TeamRules
from invariants.scan.rules import registered
from invariants.scan.rules.spec import Rule
from invariants.user_errors import UserError

KEY = "rules"
# The built-in rules' prefix: a team's ids are its own.
RESERVED_PREFIX = "MESH"
# Upper-case letters (a team's prefix), then digits: ids are matched upper-cased everywhere.
_ID = re.compile(r"[A-Z][A-Z_]*[0-9]+")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class TeamRuleError(UserError):
    """A `rules` entry that cannot be used; the message names the spec."""


def specs_of(value: object) -> tuple[str, ...]:
    """The specs a `rules` value lists: a string or an array of strings."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TeamRuleError(f"expected an array of 'module:attribute' strings, got {value!r}")
    return tuple(item.strip() for item in value)


def _split(spec: str) -> tuple[str, str]:
    module, colon, attribute = spec.partition(":")
    if not colon or not _DOTTED.fullmatch(module) or not _DOTTED.fullmatch(attribute):
        raise TeamRuleError(f"{spec!r}: expected 'module:attribute' (e.g. "
                            "'mymesh_rules.handlers:NO_BLOCKING_IN_HANDLER')")
    return module, attribute


@contextlib.contextmanager
def _importable_from(paths: Sequence[Path]) -> Iterator[None]:
    """The repository's directories first on `sys.path` while its rule modules load."""
    added = [str(path) for path in paths if str(path) not in sys.path]
    sys.path[:0] = added
    importlib.invalidate_caches()  # a directory or module written since the last import
    try:
        yield
    finally:
        for entry in added:
            with contextlib.suppress(ValueError):
                sys.path.remove(entry)


def _import(spec: str, module: str, paths: Sequence[Path]) -> ModuleType:
    try:
        with _importable_from(paths):
            return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(f"{exc.name}.")):
            where = ", ".join(str(path) for path in paths) or "the installed packages"
            raise TeamRuleError(f"{spec!r}: cannot import module {module!r}: {exc} "
                                f"(searched {where}, then the installed packages)") from None
        raise TeamRuleError(f"{spec!r}: module {module!r} raised while loading: "
                            f"{type(exc).__name__}: {exc}") from None
    except (Exception, SystemExit) as exc:  # the module's own code failed: name it, go no further
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise TeamRuleError(f"{spec!r}: module {module!r} raised while loading: "
                            f"{type(exc).__name__}: {detail}".rstrip(": ")) from None


def _record(spec: str, module: ModuleType, attribute: str) -> Rule:
    value: object = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise TeamRuleError(f"{spec!r}: module {module.__name__!r} has no attribute "
                                f"{attribute!r}") from None
        except Exception as exc:  # a module `__getattr__` or a property of its own
            raise TeamRuleError(f"{spec!r}: reading {attribute!r} raised "
                                f"{type(exc).__name__}: {exc}") from None
    if not isinstance(value, Rule):
        raise TeamRuleError(f"{spec!r}: is a {type(value).__name__}, not a rule record "
                            "(invariants.scan.api.Rule)")
    return value


def _check_id(spec: str, rule: Rule) -> None:
    if rule.id.upper().startswith(RESERVED_PREFIX):
        raise TeamRuleError(f"{spec!r}: rule id {rule.id!r} has the prefix {RESERVED_PREFIX}, "
                            "which is the harness's own: choose a prefix of your team's "
                            "(e.g. AIO001)")
    if not _ID.fullmatch(rule.id):
        raise TeamRuleError(f"{spec!r}: rule id {rule.id!r} must be upper-case letters, then "
                            "digits (e.g. AIO001)")


def _check_unique(specs: Sequence[str], records: Sequence[Rule]) -> None:
    """One id per rule and one rule per `[tool.harness]` key, the built-in ones included."""
    ids = {rule.id: "the harness's built-in rules" for rule in registered()}
    keys = {option.key: rule.id for rule in registered() for option in rule.options}
    keys.update({name: "the scan's own settings" for name in ScanConfig.__dataclass_fields__})
    for spec, rule in zip(specs, records, strict=True):
        if rule.id in ids:
            raise TeamRuleError(f"{spec!r}: duplicate rule id {rule.id!r} (also {ids[rule.id]})")
        ids[rule.id] = repr(spec)
        for option in rule.options:
            if option.key in keys:
                raise TeamRuleError(f"{spec!r}: option key {option.key!r} is taken "
                                    f"(by {keys[option.key]})")
            keys[option.key] = rule.id


def _source_files(module: ModuleType) -> list[Path]:
    """The files a rule's behaviour may come from: its top-level package's, or its own."""
    top = sys.modules.get(module.__name__.partition(".")[0], module)
    locations = getattr(top, "__path__", None)
    if locations is not None:
        return sorted({file for place in locations for file in Path(place).rglob("*.py")})
    file = getattr(module, "__file__", None)
    return [Path(file)] if file else []


def _fingerprint(specs: Sequence[str], modules: Iterable[ModuleType]) -> str:
    digest = hashlib.sha256("\x00".join(specs).encode())
    files = sorted({file for module in modules for file in _source_files(module)})
    for file in files:
        digest.update(str(file).encode())
        with contextlib.suppress(OSError):  # a file gone since the import: its name stays
            digest.update(file.read_bytes())
    return digest.hexdigest()


def load(value: object, search: Sequence[Path] = ()) -> TeamRules:
    """The team rules a `rules` value registers, in the order given; `search`: the
    repository's directories to import them from first. Raises `TeamRuleError`."""
    specs = specs_of(value)
    modules: list[ModuleType] = []
    records: list[Rule] = []
    for spec in specs:
        module_name, attribute = _split(spec)
        module = _import(spec, module_name, search)
        record = _record(spec, module, attribute)
        _check_id(spec, record)
        modules.append(module)
        records.append(record)
    _check_unique(specs, records)
    fingerprint = _fingerprint(specs, modules) if specs else ""
    return TeamRules(specs, tuple(records), fingerprint, tuple(str(place) for place in search))
