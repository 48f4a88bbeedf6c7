"""The tree-level MESH001 pass: emit sites cleared, or not, by their callers."""

from __future__ import annotations

import textwrap

import networkx as nx

from invariants.scan.engine import analyze_source, tree_passes
from invariants.scan.model import Finding, ScanConfig
from invariants.scan.rules.mesh001.callgraph import covered_functions

CONFIG = ScanConfig()

HELPER = """
from messages import DeliveryFailure

def nack(d, error):
    return DeliveryFailure(d, error)
"""


def scan(files: dict[str, str]) -> list[Finding]:
    reports = [
        analyze_source(
            path, textwrap.dedent(text).encode(), CONFIG, is_test=path.startswith("test_")
        )
        for path, text in files.items()
    ]
    assert all(report.parsed for report in reports)
    return [f for f in tree_passes(reports, CONFIG).findings if f.rule == "MESH001"]


def test_guarded_at_every_call_site_is_fine() -> None:
    router = """
    from helpers import nack

    def route(d, error):
        if d.may_answer():
            d.reply(nack(d, error))

    class Hub:
        def fail(self, d, error):
            if not d.may_answer():
                return
            self.post(nack(d, error))
    """
    assert scan({"helpers.py": HELPER, "router.py": router}) == []


def test_a_call_passing_the_guarded_deliverys_id_is_guarded() -> None:
    helper = HELPER.replace("DeliveryFailure(d, error)", "DeliveryFailure(d_id, error)")
    helper = helper.replace("def nack(d, error)", "def nack(d_id, error)")
    router = """
    def route(d, error):
        if d.may_answer():
            d.reply(nack(d.id, error))
    """
    assert scan({"helpers.py": helper, "router.py": router}) == []


def test_one_unguarded_caller_in_another_file_is_named() -> None:
    router = """
    def route(d, error):
        if d.may_answer():
            d.reply(nack(d, error))
    """
    hub = """
    class Hub:
        def drop(self, d, error):
            self.post(nack(d, error))
    """
    [finding] = scan({"helpers.py": HELPER, "router.py": router, "hub.py": hub})
    assert (finding.path, finding.line, finding.symbol) == ("helpers.py", 5, "nack")
    assert "called unguarded by Hub.drop (hub.py:4)" in finding.message


def test_no_caller_at_all_is_reported() -> None:
    [finding] = scan({"helpers.py": HELPER})
    assert "no caller of nack() in the scanned tree guards it" in finding.message


def test_a_guard_on_another_delivery_does_not_clear_the_call() -> None:
    router = """
    def route(d, other, error):
        if other.may_answer():
            d.reply(nack(d, error))
    """
    [finding] = scan({"helpers.py": HELPER, "router.py": router})
    assert "called unguarded by route (router.py:4)" in finding.message


def test_guard_travels_through_an_unguarded_middle_function() -> None:
    middle = """
    def relay(d, error):
        return nack(d, error)

    def route(d, error):
        if d.may_answer():
            relay(d, error)
    """
    assert scan({"helpers.py": HELPER, "router.py": middle}) == []
    unguarded_entry = textwrap.dedent(middle) + "\ndef sweep(d, error):\n    relay(d, error)\n"
    [finding] = scan({"helpers.py": HELPER, "router.py": unguarded_entry})
    assert "called unguarded by relay" in finding.message


def test_test_files_are_not_callers() -> None:
    router = """
    def route(d, error):
        if d.may_answer():
            d.reply(nack(d, error))
    """
    test_file = """
    def test_nack():
        assert nack(object(), "x")
    """
    assert scan({"helpers.py": HELPER, "router.py": router, "test_helpers.py": test_file}) == []


def test_test_files_have_no_emit_sites() -> None:
    assert scan({"test_helpers.py": HELPER}) == []
    assert len(scan({"helpers.py": HELPER})) == 1  # negative control: the same code, production


def test_recursion_and_cycles_terminate_and_do_not_vouch_for_themselves() -> None:
    cyclic = """
    from messages import DeliveryFailure

    def ping(d, n):
        d.reply(DeliveryFailure(d, n))
        pong(d, n - 1)

    def pong(d, n):
        ping(d, n)
        pong(d, n)
    """
    [finding] = scan({"cycle.py": cyclic})
    assert finding.symbol == "ping"
    assert "called unguarded by pong" in finding.message


def _graph(*edges: tuple[str, str, bool]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for caller, callee, unguarded in edges:
        graph.add_edge(caller, callee, unguarded=unguarded)
    return graph


def test_covered_functions_on_a_cycle_entered_guarded() -> None:
    edges = [("a:route", "a:ping", False), ("a:ping", "a:pong", True), ("a:pong", "a:ping", True)]
    # ping is entered guarded once but also re-entered, unguarded, from inside its cycle.
    assert covered_functions(_graph(*edges)) == set()
    assert covered_functions(_graph(*edges[:2])) == {"a:ping", "a:pong"}


def test_module_level_code_is_never_covered() -> None:
    assert covered_functions(_graph(("a:", "a:boot", True))) == set()
    assert covered_functions(_graph(("a:", "a:boot", False))) == {"a:boot"}


def test_module_level_emit_is_reported_without_callers() -> None:
    [finding] = scan({"boot.py": "from m import DeliveryFailure\nX = DeliveryFailure(None, 1)\n"})
    assert finding.symbol == "" and "module level" in finding.message


def test_calls_in_strings_and_comments_of_other_files_are_not_callers() -> None:
    router = """
    def route(d, error):
        if d.may_answer():
            d.reply(nack(d, error))
    """
    notes = '''
    def explain():
        """Never call nack(d, error) without a guard."""
        # nack(d, error) would be wrong here
        return "nack(d, error)"
    '''
    assert scan({"helpers.py": HELPER, "router.py": router, "notes.py": notes}) == []
    # negative control: the same file with a real call is an unguarded caller
    real = notes.rstrip(" ") + "        nack(None, 'x')\n"
    [finding] = scan({"helpers.py": HELPER, "router.py": router, "notes.py": real})
    assert "called unguarded by explain (notes.py:6)" in finding.message
