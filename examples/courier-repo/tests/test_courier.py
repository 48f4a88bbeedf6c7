import asyncio

from courier.__main__ import demo
from courier.harness_adapter import make

from invariants.adapter import FirstChooser, MessageSpec, Route
from invariants.trace import EventKind


def test_demo_runs_on_the_stock_loop() -> None:
    assert asyncio.run(demo()) == 0


def test_a_routed_post_crosses_nodes_under_the_kit() -> None:
    a = make(FirstChooser())
    a.create_hub("alpha")
    a.create_hub("beta")
    d = a.post("client", "beta", MessageSpec("Ping"), route=Route.MONOLITH)
    a.advance(100)
    assert any(e.kind == EventKind.HANDLED and e.delivery_id == d for e in a.trace())


def test_an_anonymous_post_is_rejected_and_not_answered() -> None:
    a = make(FirstChooser())
    a.create_hub("beta")
    d = a.post("client", "beta", MessageSpec("Ping"), identity=None)
    a.advance(100)
    kinds = [e.kind for e in a.trace() if e.delivery_id == d or e.answers == d]
    assert EventKind.REJECTED in kinds and EventKind.FAILURE_EMITTED not in kinds
