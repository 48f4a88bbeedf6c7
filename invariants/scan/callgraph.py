"""The tree-level MESH001 pass: an emit site unguarded in its own function is accepted
when every call of that function in the scanned tree is guarded, directly or because the
calling function is itself only ever called guarded (transitively, in networkx).

Functions are matched by their last name (`Router.report_failure` is `report_failure`),
which over-approximates the callers. Cycles are handled by solving in topological order of
the strongly connected components: a call from inside the same cycle never vouches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import networkx as nx

from invariants.scan.model import CallSite, EmitSite, FileReport, Finding, ScanConfig
from invariants.scan.names import last_part

_MODULE = "<module>"


def _function_key(symbol: str) -> str:
    return last_part(symbol) if symbol else _MODULE


def covered_functions(calls: Sequence[CallSite]) -> set[str]:
    """Function names every one of whose call sites is guarded or inside a covered caller."""
    graph = nx.DiGraph()
    for call in calls:
        caller = _function_key(call.caller)
        graph.add_edge(caller, call.callee)
        graph.edges[caller, call.callee].setdefault("unguarded", False)
        if not call.guarded:
            graph.edges[caller, call.callee]["unguarded"] = True
    components = nx.condensation(graph)
    covered: set[str] = set()
    for component in nx.topological_sort(components):
        members = components.nodes[component]["members"]
        for function in members:
            callers = list(graph.predecessors(function))
            if function == _MODULE or not callers:
                continue
            if all(
                not graph.edges[caller, function]["unguarded"]
                or (caller in covered and caller not in members)
                for caller in callers
            ):
                covered.add(function)
    return covered


def _first_unguarded_caller(
    function: str, calls: Sequence[CallSite], covered: set[str]
) -> CallSite | None:
    for call in calls:
        if (
            call.callee == function
            and not call.guarded
            and _function_key(call.caller) not in covered
        ):
            return call
    return None


def _message(site: EmitSite, calls: Sequence[CallSite], covered: set[str]) -> str:
    base = "DeliveryFailure built without a may_answer() check on the delivery it answers"
    if not site.symbol:
        return f"{base}, at module level"
    function = last_part(site.symbol)
    caller = _first_unguarded_caller(function, calls, covered)
    if caller is None:
        return f"{base}; no caller of {function}() in the scanned tree guards it"
    where = caller.caller or "module level"
    return f"{base}; {function}() is called unguarded by {where} ({caller.path}:{caller.line})"


def resolve_emit_sites(reports: Sequence[FileReport], config: ScanConfig) -> list[Finding]:
    if not config.enabled("MESH001"):
        return []
    calls = [call for report in reports for call in report.calls]
    covered = covered_functions(calls)
    by_callee: dict[str, list[CallSite]] = defaultdict(list)
    for call in calls:
        by_callee[call.callee].append(call)
    findings: list[Finding] = []
    for report in reports:
        for site in report.emit_sites:
            if site.guarded or (site.symbol and last_part(site.symbol) in covered):
                continue
            findings.append(
                Finding(
                    "MESH001",
                    site.path,
                    site.line,
                    site.column,
                    site.line,
                    _message(
                        site, by_callee[last_part(site.symbol)] if site.symbol else [], covered
                    ),
                    site.symbol,
                    site.snippet,
                )
            )
    return findings
