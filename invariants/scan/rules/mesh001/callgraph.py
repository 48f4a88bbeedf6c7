"""The tree-level MESH001 pass: an emit site unguarded in its own function is accepted
when every call of that function in the scanned tree is guarded, directly or because the
calling function is itself only ever called guarded (transitively, in networkx).

Functions are nodes named by module path and qualified name (`pkg.router:Router.nack`), so
`Router.nack`, `Hub.nack` and a free `nack` are three functions; each call is resolved to
the functions it may reach (`resolve`). The graph holds only what the answer needs: the
functions with an unguarded emit site, and, walking back along unguarded calls, their
callers. Cycles are handled by solving in topological order of the strongly connected
components: a call from inside the same cycle never vouches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from invariants.scan.model import CallSite, EmitSite, FileReport, Finding, ScanConfig
from invariants.scan.names import last_part
from invariants.scan.rules.mesh001.keys import EMIT_CONSTRUCTORS, GUARD_FUNCTIONS
from invariants.scan.rules.mesh001.resolve import DefinitionIndex
from invariants.scan.rules.mesh001.targets import function_id

if TYPE_CHECKING:  # networkx costs 0.15 s to import: only scans that build a graph pay
    import networkx as nx


def _is_module_level(function: str) -> bool:
    return function.endswith(":")


def _name(function: str) -> str:
    """`nack` for `pkg.router:Router.nack`."""
    return last_part(function.partition(":")[2])


def _digraph() -> nx.DiGraph:
    import networkx as nx

    return nx.DiGraph()


def covered_functions(graph: nx.DiGraph) -> set[str]:
    """Functions every one of whose calls is guarded or made by a covered caller.

    `graph` has an edge caller -> callee with `unguarded` True when any call along it is.
    """
    import networkx as nx

    components = nx.condensation(graph)
    covered: set[str] = set()
    for component in nx.topological_sort(components):
        members = components.nodes[component]["members"]
        for function in members:
            callers = list(graph.predecessors(function))
            if _is_module_level(function) or not callers:
                continue
            if all(
                not graph.edges[caller, function]["unguarded"]
                or (caller in covered and caller not in members)
                for caller in callers
            ):
                covered.add(function)
    return covered


@dataclass(slots=True)
class CallerGraph:
    graph: nx.DiGraph = field(default_factory=lambda: _digraph())
    calls_to: dict[str, list[CallSite]] = field(default_factory=lambda: defaultdict(list))

    def add(self, call: CallSite, callee: str) -> str:
        caller = function_id(call.path, call.caller)
        if not self.graph.has_edge(caller, callee):
            self.graph.add_edge(caller, callee, unguarded=False)
        if not call.guarded:
            self.graph.edges[caller, callee]["unguarded"] = True
        self.calls_to[callee].append(call)
        return caller


def caller_graph(
    seeds: Sequence[str], calls: Sequence[CallSite], index: DefinitionIndex
) -> CallerGraph:
    """The seeds, their callers, and (along unguarded calls) the callers' callers."""
    by_name: dict[str, list[CallSite]] = defaultdict(list)
    for call in calls:
        by_name[call.callee].append(call)
    result = CallerGraph()
    result.graph.add_nodes_from(seeds)
    todo, seen = list(seeds), set(seeds)
    while todo:
        function = todo.pop()
        for call in by_name.get(_name(function), ()):
            if function not in index.targets(call.target):
                continue
            caller = result.add(call, function)
            if not call.guarded and caller not in seen and not _is_module_level(caller):
                seen.add(caller)
                todo.append(caller)
    return result


def vocabulary(config: ScanConfig) -> tuple[str, str]:
    """(failure constructor, guard call) in the repository's own words, for messages."""
    constructor = "/".join(last_part(name) for name in EMIT_CONSTRUCTORS.of(config))
    guard = "/".join(f"{last_part(name)}()" for name in GUARD_FUNCTIONS.of(config))
    return constructor, guard


def _message(
    site: EmitSite, found: CallerGraph, covered: set[str], config: ScanConfig
) -> str:
    constructor, guard = vocabulary(config)
    base = f"{constructor} built without a {guard} check on the delivery it answers"
    if not site.symbol:
        return f"{base}, at module level"
    name = last_part(site.symbol)
    for call in found.calls_to.get(function_id(site.path, site.symbol), ()):
        if not call.guarded and function_id(call.path, call.caller) not in covered:
            where = call.caller or "module level"
            return f"{base}; {name}() is called unguarded by {where} ({call.path}:{call.line})"
    return f"{base}; no caller of {name}() in the scanned tree guards it"


def resolve_emit_sites(reports: Sequence[FileReport], config: ScanConfig) -> list[Finding]:
    if not config.enabled("MESH001"):
        return []
    open_sites = [site for report in reports for site in report.emit_sites if not site.guarded]
    if not open_sites:
        return []  # the common case: nothing to vouch for, no index or graph to build
    seeds = sorted({function_id(s.path, s.symbol) for s in open_sites if s.symbol})
    calls = [call for report in reports for call in report.calls]
    found = caller_graph(seeds, calls, DefinitionIndex(reports))
    covered = covered_functions(found.graph)
    return [
        Finding(
            "MESH001",
            site.path,
            site.line,
            site.column,
            site.line,
            _message(site, found, covered, config),
            site.symbol,
            site.snippet,
        )
        for site in open_sites
        if not (site.symbol and function_id(site.path, site.symbol) in covered)
    ]
