"""A mutant is a renamed copy imported in isolation: the real reference is never touched."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from invariants.mutants.build import PACKAGE_PREFIX, build_mutant, reference_root
from invariants.mutants.registry import find_mutant
from invariants.mutants.rename import UnsupportedImport, rename_package


def test_rename_rewrites_absolute_self_imports_only() -> None:
    source = textwrap.dedent("""\
        from reference_impl.hub import Hub
        from reference_impl import constants
        from reference_implx.other import thing
        from . import sibling
        import reference_impl.messages as messages
        import json
        text = "reference_impl.hub"
        """)
    renamed = rename_package(source, "reference_impl", "_pkg")
    assert renamed.splitlines() == [
        "from _pkg.hub import Hub",
        "from _pkg import constants",
        "from reference_implx.other import thing",
        "from . import sibling",
        "import _pkg.messages as messages",
        "import json",
        'text = "reference_impl.hub"',
    ]


def test_rename_reaches_imports_inside_blocks_and_functions() -> None:
    source = textwrap.dedent("""\
        if TYPE_CHECKING:
            from reference_impl.mesh import Mesh
        try:
            import reference_impl.a as a
        except ImportError:
            from reference_impl import b
        def f():
            from reference_impl.c import d
            return "from reference_impl.e import f"
        """)
    renamed = rename_package(source, "reference_impl", "_pkg")
    assert renamed.count("from _pkg") == 3 and "import _pkg.a as a" in renamed
    assert 'return "from reference_impl.e import f"' in renamed


def test_rename_refuses_an_import_that_binds_the_old_name() -> None:
    with pytest.raises(UnsupportedImport, match=r"import reference_impl\.hub"):
        rename_package("import reference_impl.hub\n", "reference_impl", "_pkg")


def test_building_a_mutant_never_imports_the_reference() -> None:
    """In a fresh process: build M2 and run it; `reference_impl` never enters sys.modules."""
    script = textwrap.dedent("""\
        import sys
        from invariants.mutants.build import build_mutant
        from invariants.mutants.registry import find_mutant
        from invariants.adapter import FirstChooser, MessageSpec
        build = build_mutant(find_mutant("M2"))
        adapter = build.factory(FirstChooser())
        adapter.create_hub("h0")
        adapter.post("client", "h0", MessageSpec("Request"))
        adapter.run_until_idle(60_000)
        assert len(adapter.trace()) > 0
        leaked = sorted(n for n in sys.modules if n.split(".")[0] == "reference_impl")
        print(type(adapter).__module__, leaked)
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    module, leaked = done.stdout.strip().split(" ", 1)
    assert module.startswith(PACKAGE_PREFIX + "m2_") and module.endswith(".adapter")
    assert leaked == "[]"


def test_building_leaves_an_imported_reference_untouched() -> None:
    import reference_impl.grain
    import reference_impl.ladder

    before = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "reference_impl"}
    gate = vars(reference_impl.grain)["is_resendable"]  # imported there, not re-exported
    build = build_mutant(find_mutant("M2"))
    after = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "reference_impl"}
    assert after.keys() == before.keys()
    assert all(after[n] is before[n] for n in before)
    assert vars(reference_impl.grain)["is_resendable"] is gate
    assert gate is reference_impl.ladder.is_resendable
    mutant_grain = sys.modules[f"{build.package}.grain"]
    assert mutant_grain is not reference_impl.grain
    assert mutant_grain.GrainDeliveryOperation is not reference_impl.grain.GrainDeliveryOperation
    assert mutant_grain.is_transient.__module__ == f"{build.package}.ladder"


def test_mutant_tree_is_the_reference_with_one_file_mutated_and_renamed() -> None:
    mutant = find_mutant("M7")
    build = build_mutant(mutant)
    reference = sorted(p.relative_to(reference_root()).as_posix()
                       for p in reference_root().rglob("*.py") if "__pycache__" not in p.parts)
    copied = sorted(p.relative_to(build.source_root).as_posix()
                    for p in build.source_root.rglob("*.py") if "__pycache__" not in p.parts)
    assert copied == reference
    for relative in copied:
        text = (build.source_root / relative).read_text(encoding="utf-8")
        assert "from reference_impl" not in text and "import reference_impl" not in text
    answers = (build.source_root / mutant.path).read_text(encoding="utf-8")
    assert "        nack.subscribe(self.mesh.scheduler)\n" in answers
    assert f"from {build.package}.pool import" in answers
    assert build.diff.count("\n-") >= 1 and "self.mesh.pool.subscribe(nack)" in build.diff


def test_builds_are_cached_per_process_and_named_by_their_sources() -> None:
    first = build_mutant(find_mutant("M5"))
    again = build_mutant(find_mutant("key-without-identity"))
    other = build_mutant(find_mutant("M6"))
    assert again is first
    assert first.package != other.package
    assert first.package.startswith(PACKAGE_PREFIX + "m5_")
