"""The MESH001 call graph tells functions apart by module path and qualified name.

Each case is a small tree of files. The `bad` trees hold an emit site that must be
reported although a same-named function is called guarded (matching by last name hid it);
the `good` trees must stay clean although a same-named function is called unguarded.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from invariants.scan.engine import analyze_source, tree_passes
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.rules.mesh001 import callgraph

CONFIG = ScanConfig()


def mesh001(files: dict[str, str]) -> list[Finding]:
    reports = [
        analyze_source(path, textwrap.dedent(text).encode(), CONFIG, is_test=False)
        for path, text in files.items()
    ]
    assert all(report.parsed for report in reports)
    return [f for f in tree_passes(reports, CONFIG).findings if f.rule == "MESH001"]


def where(findings: list[Finding]) -> list[tuple[str, str]]:
    return sorted((f.path, f.symbol) for f in findings)


FREE_NACK_EMITS = """
from messages import DeliveryFailure

def nack(d, error):
    return DeliveryFailure(d, error)
"""

ROUTE_GUARDED = "def route(d):\n    if d.may_answer():\n        nack(d, 1)\n"


ROUTER_NACK_GUARDED = """
class Router:
    def nack(self, d, error):
        return d.reply(error)

    def route(self, d, error):
        if d.may_answer():
            self.nack(d, error)
"""


def test_a_guarded_method_call_does_not_excuse_a_free_function_of_that_name() -> None:
    found = mesh001({"helpers.py": FREE_NACK_EMITS, "router.py": ROUTER_NACK_GUARDED})
    assert where(found) == [("helpers.py", "nack")]
    assert "no caller of nack()" in found[0].message


def test_an_unguarded_free_call_does_not_blame_a_method_of_that_name() -> None:
    router = """
    from messages import DeliveryFailure

    class Router:
        def nack(self, d, error):
            return DeliveryFailure(d, error)

        def route(self, d, error):
            if not d.may_answer():
                return
            self.nack(d, error)
    """
    free = """
    def nack(d, error):
        return None

    def sweep(d):
        nack(d, "late")
    """
    assert mesh001({"router.py": router, "free.py": free}) == []
    # negative control: the same unguarded call, made on the router, is blamed
    blamed = free.replace('nack(d, "late")', 'Router().nack(d, "late")')
    [finding] = mesh001({"router.py": router, "free.py": blamed})
    assert finding.symbol == "Router.nack" and "called unguarded by sweep" in finding.message


def test_methods_of_two_classes_are_two_functions() -> None:
    hub = """
    from messages import DeliveryFailure

    class Hub:
        def nack(self, d, error):
            return DeliveryFailure(d, error)
    """
    found = mesh001({"hub.py": hub, "router.py": ROUTER_NACK_GUARDED})
    assert where(found) == [("hub.py", "Hub.nack")]


@pytest.mark.parametrize(
    "caller",
    [
        "from pkg.impl import nack\n\ndef route(d):\n    if d.may_answer():\n        nack(d, 1)\n",
        "from .impl import nack as answer\n\ndef route(d):\n    if d.may_answer():\n"
        "        answer(d, 1)\n",
        "import pkg.impl as impl\n\ndef route(d):\n    if d.may_answer():\n"
        "        impl.nack(d, 1)\n",
        "from pkg import impl\n\ndef route(d):\n    if d.may_answer():\n        impl.nack(d, 1)\n",
        "import pkg.impl\n\ndef route(d):\n    if d.may_answer():\n        pkg.impl.nack(d, 1)\n",
    ],
    ids=["from-import", "relative-alias", "import-as", "from-package", "dotted"],
)
def test_an_imported_function_is_the_one_its_import_names(caller: str) -> None:
    other = "def nack(d, error):\n    return None\n\ndef drop(d):\n    nack(d, 0)\n"
    files = {"pkg/impl.py": FREE_NACK_EMITS, "pkg/other.py": other, "pkg/router.py": caller}
    assert mesh001(files) == []
    # negative control: the guarded call goes to the other module's nack
    retargeted = {**files, "pkg/other.py": FREE_NACK_EMITS, "pkg/impl.py": other}
    assert where(mesh001(retargeted)) == [("pkg/other.py", "nack")]


def test_a_src_layout_path_still_matches_its_import() -> None:
    caller = "from pkg.impl import nack\n\n" + ROUTE_GUARDED
    assert mesh001({"src/pkg/impl.py": FREE_NACK_EMITS, "src/pkg/router.py": caller}) == []


def test_a_re_exported_name_falls_back_to_every_function_of_that_name() -> None:
    package = "from pkg.impl import nack\n"
    caller = "from pkg import nack\n\ndef sweep(d):\n    nack(d, 1)\n"
    files = {"pkg/__init__.py": package, "pkg/impl.py": FREE_NACK_EMITS, "pkg/sweep.py": caller}
    [finding] = mesh001(files)
    assert "called unguarded by sweep" in finding.message
    guarded = caller.replace("    nack(d, 1)", "    if d.may_answer():\n        nack(d, 1)")
    assert mesh001({**files, "pkg/sweep.py": guarded}) == []


def test_an_inherited_method_is_reached_through_self() -> None:
    base = """
    from messages import DeliveryFailure

    class Base:
        def nack(self, d, error):
            return DeliveryFailure(d, error)
    """
    router = """
    from base import Base

    class Router(Base):
        def route(self, d, error):
            if d.may_answer():
                self.nack(d, error)
    """
    assert mesh001({"base.py": base, "router.py": router}) == []
    unguarded = router.replace("if d.may_answer():\n            ", "if True:\n            ")
    [finding] = mesh001({"base.py": base, "router.py": unguarded})
    assert "called unguarded by Router.route" in finding.message


def test_self_calls_in_a_base_class_reach_the_subclass_override() -> None:
    source = """
    from messages import DeliveryFailure

    class Base:
        def nack(self, d, error):
            return None

        def route(self, d, error):
            self.nack(d, error)

    class Loud(Base):
        def nack(self, d, error):
            return DeliveryFailure(d, error)
    """
    [finding] = mesh001({"router.py": source})
    assert finding.symbol == "Loud.nack"
    assert "called unguarded by Base.route" in finding.message
    guarded = source.replace("self.nack(d, error)", "d.may_answer() and self.nack(d, error)")
    assert mesh001({"router.py": guarded}) == []


def test_super_reaches_the_base_method() -> None:
    source = """
    from messages import DeliveryFailure

    class Base:
        def nack(self, d, error):
            return DeliveryFailure(d, error)

    class Router(Base):
        def nack(self, d, error):
            if d.may_answer():
                return super().nack(d, error)
    """
    assert mesh001({"router.py": source}) == []
    [finding] = mesh001({"router.py": source.replace("if d.may_answer():", "if error:")})
    assert finding.symbol == "Base.nack"


def test_an_unknown_receiver_reaches_every_method_of_that_name_but_no_free_function() -> None:
    hub = """
    from messages import DeliveryFailure

    class Hub:
        def nack(self, d, error):
            return DeliveryFailure(d, error)

        def fail(self, d, error):
            if d.may_answer():
                self.nack(d, error)
    """
    sweeper = "def sweep(hubs, d):\n    for hub in hubs:\n        hub.nack(d, 0)\n"
    [finding] = mesh001({"hub.py": hub, "sweeper.py": sweeper})
    assert finding.symbol == "Hub.nack" and "called unguarded by sweep" in finding.message
    # the same unknown-receiver call cannot reach a module-level function
    assert where(mesh001({"helpers.py": FREE_NACK_EMITS, "sweeper.py": sweeper})) == [
        ("helpers.py", "nack")
    ]
    assert "no caller of nack()" in mesh001({"helpers.py": FREE_NACK_EMITS, "sweeper.py": sweeper})[
        0
    ].message


def test_a_nested_function_is_its_own_node() -> None:
    source = """
    from messages import DeliveryFailure

    def nack(d, error):
        return None

    def route(d, error):
        def nack(d, error):
            return DeliveryFailure(d, error)

        if d.may_answer():
            nack(d, error)

    def drop(d):
        nack(d, 0)
    """
    assert mesh001({"router.py": source}) == []
    unguarded = source.replace("if d.may_answer():", "if error:")
    [finding] = mesh001({"router.py": unguarded})
    assert finding.symbol == "route.nack" and "called unguarded by route" in finding.message


# -- calls inside f-strings, in files the text scan reads -----------------------------------

@pytest.mark.parametrize(
    "line",
    [
        'log(f"answered {nack(d, 0)}")',
        "log(f'{d.id}: {nack(d, 0)!r:>10}')",
        'log(rf"""\n{nack(d, 0)}\n""")',
        "log(f\"{ {'k': nack(d, 0)} }\")",
        'log(F"{nack(d, 0):{width}}")',
    ],
    ids=["plain", "conversion-and-spec", "raw-triple", "nested-braces", "nested-field"],
)
def test_a_call_inside_an_f_string_is_an_unguarded_caller(line: str) -> None:
    logger = f"def sweep(d, width=8):\n    {line}\n"
    files = {"helpers.py": FREE_NACK_EMITS, "router.py": ROUTE_GUARDED, "logger.py": logger}
    [finding] = mesh001(files)
    assert "called unguarded by sweep (logger.py:" in finding.message


@pytest.mark.parametrize(
    "line",
    [
        'log("{nack(d, 0)}")',
        'log(f"{{nack(d, 0)}}")',
        'log(f"nack(d, 0)")',
        "# f'{nack(d)}'",
        'log(f"{nack}: {(d, 0)}")',
    ],
    ids=["not-an-f-string", "escaped-braces", "no-field", "comment", "adjacent-fields"],
)
def test_text_that_only_looks_like_a_call_is_not_a_caller(line: str) -> None:
    logger = f"def sweep(d):\n    {line}\n    return None\n"
    files = {"helpers.py": FREE_NACK_EMITS, "router.py": ROUTE_GUARDED, "logger.py": logger}
    assert mesh001(files) == []


def test_a_scan_rooted_inside_the_package_still_matches_its_import() -> None:
    caller = "from pkg.impl import nack\n\n" + ROUTE_GUARDED
    assert mesh001({"impl.py": FREE_NACK_EMITS, "router.py": caller}) == []
    unguarded = caller.replace("if d.may_answer():", "if d:")
    [finding] = mesh001({"impl.py": FREE_NACK_EMITS, "router.py": unguarded})
    assert "called unguarded by route (router.py:" in finding.message


@pytest.mark.parametrize("tree", [False, True], ids=["text-scan", "tree"])
def test_the_first_parameter_of_a_static_method_is_not_self(tree: bool) -> None:
    router = """
    class Router:
        def nack(self, error):
            return None

        @staticmethod
        def fail(d, error):
            d.nack(error)
    """
    if tree:
        router = "# may_answer\n" + textwrap.dedent(router)
    delivery = """
    from messages import DeliveryFailure

    class Delivery:
        def nack(self, error):
            return DeliveryFailure(self, error)

        def answer(self, error):
            if self.may_answer():
                self.nack(error)
    """
    [finding] = mesh001({"router.py": router, "delivery.py": delivery})
    assert finding.symbol == "Delivery.nack"
    assert "called unguarded by Router.fail" in finding.message
    # negative control: as a method, `d` is the router itself, whose nack builds nothing
    method = re.sub(r"\n\s*@staticmethod", "", router)
    assert mesh001({"router.py": method, "delivery.py": delivery}) == []


def test_a_method_called_on_the_guarded_delivery_is_a_guarded_call() -> None:
    delivery = """
    from messages import DeliveryFailure

    class Delivery:
        def nack(self, error):
            return DeliveryFailure(self, error)
    """
    caller = """
    def answer(d, other, error):
        if d.may_answer():
            d.nack(error)
    """
    assert mesh001({"delivery.py": delivery, "router.py": caller}) == []
    on_other = caller.replace("if d.may_answer():", "if other.may_answer():")
    [finding] = mesh001({"delivery.py": delivery, "router.py": on_other})
    assert "called unguarded by answer" in finding.message


def test_the_index_is_built_only_for_an_unguarded_emit_site(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_index(reports: object) -> None:
        raise AssertionError("the definition index was built")

    monkeypatch.setattr(callgraph, "DefinitionIndex", no_index)
    guarded = "def route(d):\n    if d.may_answer():\n        d.reply(DeliveryFailure(d, 1))\n"
    assert mesh001({"router.py": guarded, "helpers.py": ROUTE_GUARDED}) == []
    # negative control: an unguarded emit site needs the index
    with pytest.raises(AssertionError, match="definition index"):
        mesh001({"helpers.py": FREE_NACK_EMITS, "router.py": ROUTE_GUARDED})
