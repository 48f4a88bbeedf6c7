"""A mutant is a renamed copy imported in isolation: the real reference is never touched."""

from __future__ import annotations

import importlib
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap
import traceback
import types

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


def _same_code(ours: types.CodeType, compiled: types.CodeType) -> list[str]:
    """Where two code objects differ but in their columns (the placeholder's length)."""
    fields = ("co_code", "co_names", "co_varnames", "co_filename", "co_name", "co_qualname",
              "co_firstlineno", "co_flags", "co_argcount", "co_kwonlyargcount")
    differ = [f"{ours.co_qualname}.{f}" for f in fields
              if getattr(ours, f) != getattr(compiled, f)]
    if [line for *_, line in ours.co_lines()] != [line for *_, line in compiled.co_lines()]:
        differ.append(f"{ours.co_qualname}: line numbers")
    consts = list(zip(ours.co_consts, compiled.co_consts, strict=True))
    differ += [f"{ours.co_qualname}: a constant" for a, b in consts
               if not isinstance(a, types.CodeType) and a != b]
    for a, b in consts:
        if isinstance(a, types.CodeType):
            differ += _same_code(a, b)
    return differ


def test_a_copys_code_is_what_compiling_its_files_gives() -> None:
    """Each module of a mutant's copy runs the code compiling its renamed file gives: the
    placeholder form compiled once, the copy's name put in its imports."""
    build = build_mutant(find_mutant("M21"))
    for relative in sorted(reference_root().rglob("*.py")):
        name = relative.relative_to(reference_root()).with_suffix("").as_posix()
        if name in ("__main__",):
            continue  # never imported by a copy
        module = f"{build.package}.{name}".removesuffix(".__init__")
        loader = importlib.util.find_spec(module).loader  # type: ignore[union-attr]
        path = str(build.source_root / relative.relative_to(reference_root()))
        compiled = compile(pathlib.Path(path).read_text(encoding="utf-8"), path, "exec",
                           dont_inherit=True)
        assert _same_code(loader.get_code(module), compiled) == [], name


def test_a_copy_is_forgotten_whole_and_leaves_no_bytecode() -> None:
    from invariants.mutants.build import isolate
    from invariants.mutants.copies import forget

    sources = {path: (reference_root() / path).read_text(encoding="utf-8")
               for path in ("__init__.py", "constants.py", "faults.py")}
    sources["adapter.py"] = "from reference_impl.faults import FaultBook\n"
    sources["late.py"] = "def hub():\n    from reference_impl import constants\n" \
                         "    return constants\n"
    package = f"{PACKAGE_PREFIX}copy_test"
    directory, adapter = isolate(sources, package)
    late = importlib.import_module(f"{package}.late")
    assert late.hub() is sys.modules[f"{package}.constants"]  # a late import: the copy's
    assert adapter.FaultBook.__module__ == f"{package}.faults"
    assert not list(directory.rglob("__pycache__"))
    forget(package)
    assert not [n for n in sys.modules if n.split(".")[0] == package]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{package}.constants")


def test_a_copy_that_does_not_import_leaves_nothing_imported() -> None:
    from invariants.mutants.build import isolate

    package = f"{PACKAGE_PREFIX}broken_test"
    sources = {"__init__.py": "", "adapter.py": "from reference_impl.gone import x\n"}
    with pytest.raises(ModuleNotFoundError, match=f"{package}.gone"):
        isolate(sources, package)
    assert not [n for n in sys.modules if n.split(".")[0] == package]


def test_a_mutants_traceback_shows_its_own_source_lines() -> None:
    build = build_mutant(find_mutant("M21"))
    breaker = sys.modules[f"{build.package}.breaker"]
    shed = breaker.AggregateWatermark.should_shed
    try:
        shed(None, "depth", "class")  # not a watermark: raises inside the mutated method
    except Exception as exc:
        text = "".join(traceback.format_exception(exc))
    assert f"{build.source_root / 'breaker.py'}" in text
    assert "return depth > self.watermark and" in text


def test_build_scratch_goes_to_ram_unless_tmpdir_says_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    from invariants.mutants import build

    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(build, "RAM_DIRECTORY", tmp_path)
    monkeypatch.setattr(build, "RAM_ROOM_BYTES", 1)
    assert build.scratch_parent() == str(tmp_path)
    monkeypatch.setattr(build, "RAM_ROOM_BYTES", 2**62)  # no such room anywhere
    assert build.scratch_parent() is None
    monkeypatch.setattr(build, "RAM_ROOM_BYTES", 1)
    monkeypatch.setattr(build, "RAM_DIRECTORY", tmp_path / "absent")
    assert build.scratch_parent() is None
    monkeypatch.setattr(build, "RAM_DIRECTORY", tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "session"))  # a fuzz session's, say
    assert build.scratch_parent() is None


def test_scratch_a_killed_run_left_in_ram_is_swept(tmp_path: pathlib.Path) -> None:
    from invariants.mutants import build

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead = tmp_path / f"{build.SCRATCH_PREFIX}{gone.stdout.strip()}-abc"
    alive = tmp_path / f"{build.SCRATCH_PREFIX}{os.getpid()}-def"
    other = tmp_path / f"{build.SCRATCH_PREFIX}notapid-ghi"
    for directory in (dead, alive, other):
        (directory / "pid1").mkdir(parents=True)
    build.sweep_ram(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name])
