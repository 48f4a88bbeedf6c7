"""Guard flags: a variable that holds a `may_answer()` result (`ok = d.may_answer()`, or
`(ok := d.may_answer())`) and is bound nowhere else in the function. Testing it is testing
the check: wherever it is read, its one binding has run (else reading it would raise).
Any other binding of the name anywhere under the function, a nested scope included, or a
`global`/`nonlocal` declaration of it, disqualifies it: wrong only towards reporting more.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

import libcst as cst

from invariants.scan.context import child_nodes
from invariants.scan.rules.mesh001.guards import guard_call, guarded_delivery


def _names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names(target.value)


_TARGETED = (
    cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.Del,
)


def _bound(node: cst.CSTNode) -> Iterator[str]:
    """The names `node` itself binds (not its children's)."""
    if isinstance(node, _TARGETED):
        yield from _names(node.target)
    elif isinstance(node, cst.AsName) and isinstance(node.name, cst.Name):
        yield node.name.value
    elif isinstance(node, cst.ImportAlias) and node.asname is None:
        dotted: cst.BaseExpression = node.name
        while isinstance(dotted, cst.Attribute):
            dotted = dotted.value
        if isinstance(dotted, cst.Name):
            yield dotted.value
    elif isinstance(node, (cst.Param, cst.FunctionDef, cst.ClassDef)):
        yield node.name.value
    elif isinstance(node, (cst.Global, cst.Nonlocal)):
        yield from (item.name.value for item in node.names)
        yield from (item.name.value for item in node.names)  # a declaration never qualifies
    elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
        yield node.name.value


def guard_flags(
    function: cst.FunctionDef, guard_functions: Sequence[str]
) -> dict[str, tuple[str, cst.Call]]:
    """Variable -> (delivery, check) for every guard flag of `function`."""
    nodes = _under(function.body)
    candidates: dict[str, tuple[str, cst.Call]] = {}
    for node in nodes:
        found = _candidate(node, guard_functions)
        if found is not None:
            candidates[found[0]] = found[1]
    if not candidates:  # most functions: no check kept in a variable, nothing to count
        return {}
    bindings: Counter[str] = Counter()
    for node in nodes:
        if isinstance(node, _BINDERS):
            bindings.update(_bound(node))
    return {name: found for name, found in candidates.items() if bindings[name] == 1}


_BINDERS = (
    *_TARGETED, cst.AsName, cst.ImportAlias, cst.Param, cst.FunctionDef, cst.ClassDef,
    cst.Global, cst.Nonlocal, cst.MatchAs, cst.MatchStar,
)


def _under(root: cst.CSTNode) -> list[cst.CSTNode]:
    """`root` and every node below it (nested scopes included)."""
    nodes: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(child_nodes(node))
    return nodes


def _candidate(
    node: cst.CSTNode, guard_functions: Sequence[str]
) -> tuple[str, tuple[str, cst.Call]] | None:
    """(variable, (delivery, check)) when `node` binds a check's result to one name."""
    value: cst.BaseExpression | None = None
    name: str | None = None
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target = node.targets[0].target
        if isinstance(target, cst.Name):
            name, value = target.value, node.value
    elif isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
        name, value = node.target.value, node.value
    if name is None or value is None:
        return None
    delivery = guarded_delivery(value, guard_functions)
    call = guard_call(value)
    if delivery is None or not isinstance(call, cst.Call):
        return None
    return name, (delivery, call)
