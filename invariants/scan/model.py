"""Plain data shared by the scanner's parts: configuration, findings, emit sites.

The per-file analysis (`engine`) produces a `FileReport` from source bytes alone, so it
can be cached by content hash and run in worker processes; the tree-level pass (the
MESH001 call graph) and the product layer (suppressions, baseline, output) consume it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RULES: dict[str, str] = {
    "MESH000": "parse-error",
    "MESH001": "unguarded-failure-emit",
    "MESH002": "payload-type-exemption",
    "MESH003": "resend-after-timeout",
    "MESH004": "detached-subscription",
    "MESH005": "module-mutable-state",
    "MESH006": "fixed-sleep-in-test",
}

MUTABLE_STATE_TAGS = ("CONST", "MEMO", "PROC", "TESTPERF")


@dataclass(frozen=True, slots=True)
class ScanConfig:
    """Every name a rule matches on. Defaults need no configuration for the reference mesh.

    Loaded from `[tool.harness]` of the scanned repo's pyproject.toml (see `config`).
    """

    paths: tuple[str, ...] = (".",)
    exclude: tuple[str, ...] = (
        ".git/*", "*/.git/*", ".venv/*", "*/.venv/*", "build/*", "dist/*",
        "*/node_modules/*", "*/__pycache__/*",
    )
    test_globs: tuple[str, ...] = ("test_*.py", "*_test.py", "conftest.py")
    select: tuple[str, ...] = tuple(RULES)
    ignore: tuple[str, ...] = ()
    # MESH001
    emit_constructors: tuple[str, ...] = ("DeliveryFailure",)
    guard_functions: tuple[str, ...] = ("may_answer",)
    expected_emit_sites: int | None = None
    # MESH002
    payload_attributes: tuple[str, ...] = ("message",)
    exemption_types: tuple[str, ...] = ("DeliveryFailure",)
    exemption_attributes: tuple[str, ...] = ("can_be_ignored", "system_message")
    # MESH003
    non_idempotent_calls: tuple[str, ...] = (
        "deliver", "deliver_message", "route_message", "post", "send",
    )
    timeout_predicates: tuple[str, ...] = ("is_transient", "is_transient_failure")
    timeout_exceptions: tuple[str, ...] = ("TimeoutError", "asyncio.TimeoutError")
    # MESH004
    subscription_calls: tuple[str, ...] = (
        "subscribe", "asyncio.create_task", "loop.create_task", "asyncio.ensure_future",
        "create_task", "ensure_future",
    )
    # MESH006
    sleep_calls: tuple[str, ...] = ("time.sleep", "sleep", "asyncio.sleep")
    # Files larger than this are reported as MESH000 instead of parsed.
    max_file_bytes: int = 2_000_000

    def enabled(self, rule: str) -> bool:
        return rule in self.select and rule not in self.ignore


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str  # "MESH001"
    path: str  # posix path relative to the scan root
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    message: str
    symbol: str  # enclosing qualified name, "" at module level
    snippet: str = ""  # the source line, stripped (for text output and the baseline key)


@dataclass(frozen=True, slots=True)
class EmitSite:
    """A DeliveryFailure construction, for MESH001 and the inventory."""

    path: str
    line: int
    column: int
    symbol: str  # enclosing function's qualified name
    guarded: bool  # dominated by a may_answer() true edge in its own function
    guard_line: int | None  # the guarding line, when guarded
    snippet: str = ""


@dataclass(frozen=True, slots=True)
class CallSite:
    """A call to a function by name, for the MESH001 call-graph pass."""

    path: str
    line: int
    caller: str  # qualified name of the calling function ("" = module level)
    callee: str  # the called name (last dotted component; the imported name for an alias)
    guarded: bool  # dominated by a may_answer() true edge in the caller
    # What the call may reach, resolved against the whole tree later (see `targets`):
    # "!mod:Qual.name" a definition of this file, "=a.b.name" an imported dotted name,
    # "@mod:Class.name" a self/cls call, ".name" any method, "*name" any function.
    target: str = ""


@dataclass(frozen=True, slots=True)
class Definition:
    """A function or class defined in a production file, for resolving call targets."""

    qualname: str  # "Router.nack", "nack", "outer.inner"
    is_class: bool
    bases: tuple[str, ...] = ()  # a class's bases, as call-target descriptors


@dataclass(slots=True)
class FileReport:
    """Everything the per-file analysis learned. Picklable and JSON-able for the cache."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    emit_sites: list[EmitSite] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    parsed: bool = True
    definitions: list[Definition] = field(default_factory=list)
