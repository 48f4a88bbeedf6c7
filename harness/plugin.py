"""`pytest -p harness`: static scans, dynamic invariants and the kill matrix as pytest items.

Loaded in every pytest run once mesh-harness is installed (the `pytest11` entry point named
`harness`; `-p no:harness` turns it off). It always registers its options, ini keys,
markers and fixtures; it collects harness items only when asked (`options.wants_items`).
The hooks stay thin: the work is in plain functions of the modules beside this one.
"""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from harness.options import add_options, overrides_from, wants_items
from harness.run_key import RUN_KEY
from harness.settings import HarnessSettings, resolve
from invariants import interrupts
from invariants.adapter import AdapterFactory, FirstChooser, MeshAdapter, SeededChooser
from invariants.adapter_spec import AdapterSpecError, load_factory
from invariants.scan.config import find_pyproject
from invariants.user_errors import UserError

MARKERS = (
    "harness: an item of mesh-harness (a scanned file, an invariant or a mutant)",
    "harness_scan: a mesh-harness static-scan item",
    "harness_invariant: a mesh-harness dynamic-invariant item",
    "harness_conformance: a mesh-harness adapter-conformance item (adapter-check)",
    "harness_prove: a mesh-harness kill-matrix item (one pre-fix mutant)",
    "harness_seed(seed): the mesh_adapter fixture's mesh takes seeded choices (default: FIFO)",
)
_SETTINGS_KEY = pytest.StashKey[HarnessSettings]()
_INTERRUPTS_KEY = pytest.StashKey[ExitStack]()


def _settings(config: pytest.Config) -> HarnessSettings:
    """This run's settings, resolved once; a bad value is a `pytest.UsageError`."""
    if _SETTINGS_KEY not in config.stash:
        try:
            pyproject = find_pyproject(config.rootpath)
            settings = resolve(pyproject, config.rootpath, overrides_from(config))
            config.stash[_SETTINGS_KEY] = settings
        except UserError as exc:
            raise pytest.UsageError(f"mesh-harness: {exc}") from None
    return config.stash[_SETTINGS_KEY]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if not wants_items(config):
        return
    # Imported here: the plugin loads in every pytest run, and these pull in the scanner.
    from harness.reporter import HarnessReporter
    from harness.run_state import prepare

    try:
        run = prepare(_settings(config))
    except UserError as exc:  # a setting, spec or file the user gave: one line
        raise pytest.UsageError(f"mesh-harness: {exc}") from None
    config.stash[RUN_KEY] = run
    config.pluginmanager.register(HarnessReporter(run), "harness-reporter")
    # SIGTERM and SIGHUP end the run as Ctrl-C does, never as a verdict (undone at unconfigure).
    handlers = config.stash[_INTERRUPTS_KEY] = ExitStack()
    handlers.enter_context(interrupts.handled())


def pytest_unconfigure(config: pytest.Config) -> None:
    handlers = config.stash.get(_INTERRUPTS_KEY, None)
    if handlers is not None:
        handlers.close()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """A harness run a signal ended exits as the signal does (130 SIGINT, 143 SIGTERM, 129
    SIGHUP), not with pytest's own 2, so that no caller takes it for a finished run."""
    signum = interrupts.received()
    if signum is not None and _INTERRUPTS_KEY in session.config.stash:
        session.exitstatus = 128 + signum


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection, so those apply to our items too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if RUN_KEY in config.stash:
        from harness.collect import harness_items  # only in runs that collect harness items

        items.extend(harness_items(session))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """With several adapters configured, a test using the adapter fixtures runs on each."""
    if "mesh_adapter_factory" not in metafunc.fixturenames:
        return
    try:
        adapters = _settings(metafunc.config).adapters
    except pytest.UsageError:
        return  # the fixture reports it, once per test, as one line
    if len(adapters) > 1:
        metafunc.parametrize("mesh_adapter_factory", adapters, indirect=True, ids=adapters)


@pytest.fixture
def mesh_adapter_factory(request: pytest.FixtureRequest) -> AdapterFactory:
    """The configured adapter factory (`--harness-adapter` / `[tool.harness] adapter`)."""
    try:
        settings = _settings(request.config)
        spec: str = getattr(request, "param", settings.adapters[0])
        return load_factory(spec, settings.adapter_origin)
    except (pytest.UsageError, AdapterSpecError) as exc:
        problem = str(exc)
    pytest.fail(problem, pytrace=False)  # out of the except: the line once, unchained


@pytest.fixture
def mesh_adapter(
    mesh_adapter_factory: AdapterFactory, request: pytest.FixtureRequest
) -> MeshAdapter:
    """A fresh mesh from the configured adapter, FIFO schedule unless `harness_seed(n)`."""
    marker = request.node.get_closest_marker("harness_seed")
    chooser = SeededChooser(int(marker.args[0])) if marker is not None else FirstChooser()
    return mesh_adapter_factory(chooser)
