"""TinyMesh's own tests, through the harness's `mesh_adapter` fixture and directly."""

from tinymesh.letters import Kind, Plain
from tinymesh.mesh import TinyMesh

from invariants.adapter import MessageSpec
from invariants.trace import EventKind, MessageClass


def test_a_routed_letter_is_served(mesh_adapter):
    mesh_adapter.create_hub("orders")
    delivery = mesh_adapter.post("client", "orders", MessageSpec("PlaceOrder"))
    mesh_adapter.advance(1)
    served = [e.delivery_id for e in mesh_adapter.trace() if e.kind is EventKind.HANDLED]
    assert served == [delivery]


def test_a_letter_nobody_vouched_for_is_refused_and_not_answered():
    mesh = TinyMesh()
    mesh.open_box("orders")
    mesh.send("client", "orders", Plain("PlaceOrder", Kind.REQUEST), caller=None)
    mesh.clock.run_idle(1_000)
    seen = [note.what for note in mesh.log.notes]
    assert "refused" in seen
    assert "bounced" not in seen


def test_a_full_mailbox_spills_chatter_but_queues_requests():
    mesh = TinyMesh()
    box = mesh.open_box("orders", spill_at=2)
    box.pause(100)
    for _ in range(3):
        mesh.send("client", "orders", Plain("Heartbeat", Kind.CHATTER), caller="u", routed=False)
    mesh.send("client", "orders", Plain("PlaceOrder", Kind.REQUEST), caller="u", routed=False)
    assert [n.what for n in mesh.log.notes].count("spilled") == 1
    assert len(box.queue) == 3


def test_the_adapter_states_each_class_it_was_given(mesh_adapter):
    mesh_adapter.create_hub("orders")
    mesh_adapter.post("client", "orders", MessageSpec("Ping", MessageClass.IGNORABLE))
    mesh_adapter.advance(1)
    posted = [e for e in mesh_adapter.trace() if e.kind is EventKind.POSTED]
    assert [e.message_class for e in posted] == [MessageClass.IGNORABLE]


def test_a_graceful_stop_holds_serving_until_the_leg_in_flight_lands():
    mesh = TinyMesh()
    mesh.open_box("orders")
    mesh.slow_down("orders", 5_000)
    mesh.send("client", "orders", Plain("PlaceOrder", Kind.REQUEST), caller="u")
    mesh.stop(graceful=True)
    assert mesh.clock.run_idle(60_000)
    seen = [(n.at, n.what, n.fields.get("why")) for n in mesh.log.notes]
    order = [seen.index(step) for step in [
        (0, "hold_on", None), (5_001, "leg_close", None), (5_001, "hold_off", "drained"),
        (5_001, "stop_done", None)]]
    assert order == sorted(order)


def test_a_watch_on_a_missing_mailbox_gives_up_after_its_retries():
    mesh = TinyMesh()
    mesh.watch("client", "nowhere", retries=3)
    assert mesh.clock.run_idle(60_000)
    tries = [n for n in mesh.log.notes if n.what == "watch_try"]
    ends = [n.fields["why"] for n in mesh.log.notes if n.what == "watch_gave_up"]
    assert len(tries) == 4
    assert ends == ["gave_up:NoSuchHub"]
