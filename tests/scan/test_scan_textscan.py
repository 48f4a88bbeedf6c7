"""The text scan (files without a guard) against the tree (files with one): same facts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from invariants.scan.engine import analyze_source
from invariants.scan.model import RuleOptions, ScanConfig
from invariants.scan.rules.mesh001.targets import module_of, target_name
from invariants.scan.rules.mesh001.textscan import (
    blank_strings,
    imports,
    replacement_fields,
    scopes,
)

CONFIG = ScanConfig()

SOURCES = {
    "methods": """
        import pkg.impl as impl
        from .helpers import nack as answer, drop
        from pkg import (
            mod,
        )

        class Base(object):
            def nack(self, d):
                return answer(d)

        class Router(Base, metaclass=Meta):
            @decorate(factory())
            def route(self, d, error):
                self.nack(d)
                super().nack(d)
                make().nack(d)
                impl.nack(d)
                mod.sub.nack(d)
                Router.nack(self, d)
                handler = self.nack
                handler(d)
                super().value.split(d)  # not a super call: an unknown receiver
                impl.drop \\
                    (d)

                def later():
                    self.nack(d)
                    drop(d)

                return later

            @staticmethod
            def build(
                a,
                b,
            ):
                return Base().nack(a)
        """,
    "module": """
        from . import *

        def nack(d):
            return None

        async def main(d):
            await nack(d)
            unknown(d)
            print(f"{nack(d)!r} and {{not_a_call(d)}}")
            x = "nack(d)"  # nack(d)
            y = '''\\
            drop(d)
            '''
            return len(x + y)

        if __name__ == "__main__":
            main(None)
        """,
}


def _calls(source: str, *, tree: bool) -> set[tuple[str, str, str]]:
    text = textwrap.dedent(source)
    if tree:
        text = "# may_answer is mentioned: the calls come from the tree\n" + text
    report = analyze_source("pkg/router.py", text.encode(), CONFIG, is_test=False)
    assert report.parsed
    return {(call.caller, call.callee, call.target) for call in report.calls}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_text_scan_finds_the_calls_the_tree_has(name: str) -> None:
    from_text = _calls(SOURCES[name], tree=False)
    assert from_text == _calls(SOURCES[name], tree=True)
    assert from_text  # negative control against an empty comparison


def test_call_targets_of_the_methods_example() -> None:
    targets = {target for _, _, target in _calls(SOURCES["methods"], tree=False)}
    assert {
        "=pkg.helpers.nack",  # answer() is the alias of a relative import
        "@pkg.router:Router.nack",  # self.nack() and super().nack()
        ".nack",  # make().nack() and Base().nack()
        "=pkg.impl.nack",
        "=pkg.mod.sub.nack",
        "!pkg.router:Router.nack",
        "*handler",  # a local variable: every function of that name
        "=pkg.helpers.drop",
        "=pkg.impl.drop",  # a backslash continuation before the bracket
        ".split",
    } <= targets
    assert "@pkg.router:Router.split" not in targets
    assert not any("print" in t or "len" in t for t in targets)  # builtins reach nothing


def test_definitions_carry_qualified_names_and_bases() -> None:
    report = analyze_source(
        "pkg/router.py", textwrap.dedent(SOURCES["methods"]).encode(), CONFIG, is_test=False
    )
    by_name = {d.qualname: d for d in report.definitions}
    assert set(by_name) == {
        "Base", "Base.nack", "Router", "Router.route", "Router.route.later", "Router.build",
    }
    assert by_name["Router"].bases == ("!pkg.router:Base", "*Meta")
    assert by_name["Base"].bases == ()  # `object` is a builtin
    assert by_name["Router"].is_class and not by_name["Router.route"].is_class


def test_test_files_record_neither_calls_nor_definitions() -> None:
    source = textwrap.dedent(SOURCES["methods"]).encode()
    report = analyze_source("tests/test_router.py", source, CONFIG, is_test=True)
    assert report.calls == [] and report.definitions == []


def test_blanking_keeps_lines_and_f_string_fields() -> None:
    text = 'a = f"x{g(1)}y"\nb = """\n{h(2)}\n"""\nc = 1  # k(3)\nd = rf\'\'\'\n{m(4)}\n\'\'\'\n'
    code = blank_strings(text)
    assert code.count("\n") == text.count("\n")
    assert "g(1)" in code and "m(4)" in code
    assert "h(2)" not in code and "k(3)" not in code
    # a kept field sits on the literal's first line, so it cannot look like a dedent
    assert code.splitlines()[5].startswith('d = rf"" m(4)')


def test_replacement_fields() -> None:
    assert replacement_fields("a{b}c{{d}}e{f!r:>{w}}") == ["b", "f!r:>{w}"]
    assert replacement_fields("{x['}']}") == ["x['}']"]
    assert replacement_fields("{unclosed(") == ["unclosed("]
    assert replacement_fields("no fields") == []


def test_scopes_follow_indentation_and_multi_line_headers() -> None:
    code = blank_strings(
        textwrap.dedent(
            """
            class A:
                def f(
                    self,
                ):
                    def g():
                        pass
                    return g

                x = 1

            def h():
                pass
            """
        )
    )
    found = scopes(code)
    assert [s.qualname for s in found] == ["A", "A.f", "A.f.g", "h"]
    assert [s.parent for s in found] == [-1, 0, 1, -1]
    assert found[1].method_of == ("A", "self") and found[2].method_of == ("A", "self")
    assert found[0].method_of is None and found[3].method_of is None
    assert code[found[1].end :].lstrip().startswith("x = 1")  # the method ends before x


def test_imports_resolve_relative_names() -> None:
    code = "import a.b, c as d\nfrom . import x\nfrom ..m import (f as g,\n h)\ny = 1\n"
    assert imports(code, "pkg.sub") == {
        "a": "a", "d": "c", "x": "pkg.sub.x", "g": "pkg.m.f", "h": "pkg.m.h",
    }


def test_module_paths_and_target_names() -> None:
    assert module_of("pkg/router.py") == "pkg.router"
    assert module_of("pkg/__init__.py") == "pkg"
    assert module_of("main.py") == "main"
    assert [target_name(t) for t in ("!m:A.nack", "=p.q.nack", "@m:A.nack", ".nack", "*nack")] == [
        "nack"
    ] * 5


REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", ["reference_impl", "invariants/scan"])
def test_the_text_scan_agrees_with_the_tree_on_real_code(package: str) -> None:
    # guard_functions decide the path: a name every file mentions forces the tree, one no
    # file mentions forces the text scan (no call of either name: nothing is guarded)
    tree = ScanConfig(options=RuleOptions({"guard_functions": ("e",)}))
    text = ScanConfig(options=RuleOptions({"guard_functions": ("\x00",)}))
    files = sorted((REPOSITORY / package).glob("*.py"))
    assert len(files) > 5
    for file in files:
        path, source = file.relative_to(REPOSITORY).as_posix(), file.read_bytes()
        by_tree = analyze_source(path, source, tree, is_test=False)
        by_text = analyze_source(path, source, text, is_test=False)
        facts = [{(c.caller, c.callee, c.target) for c in r.calls} for r in (by_tree, by_text)]
        assert facts[0] == facts[1], path
        assert by_tree.definitions == by_text.definitions, path
