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
