"""Envelope and packaging (seed 001, issue #1485): the answer policy must be read off the
envelope, because after `package()` the payload is RawJson."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invariants.trace import MessageClass
from reference_impl.envelope import ANSWER_SUPPRESSED, DIAGNOSTIC_KEY, Delivery, fresh_delivery
from reference_impl.messages import (
    DeliveryFailure,
    ErrorType,
    Message,
    RawJson,
    encode_payload,
    new_message,
)


def _delivery(message: Message) -> Delivery:
    return Delivery("d1", "owner", "cache", message)


@pytest.mark.parametrize(
    ("message", "may_answer"),
    [
        (Message("Ping"), True),
        (Message("Heartbeat", MessageClass.IGNORABLE), False),
        (Message("ShutdownRequest", MessageClass.LIFECYCLE), False),
        (Message("SystemPing", MessageClass.SYSTEM), True),
        (DeliveryFailure.as_payload("d0", ErrorType.NOT_FOUND), False),
    ],
)
def test_may_answer_is_the_same_before_and_after_packaging(
    message: Message, may_answer: bool
) -> None:
    plain = _delivery(message)
    packaged = plain.package()
    assert isinstance(packaged.message, RawJson)
    assert plain.may_answer() is may_answer
    assert packaged.may_answer() is may_answer


def test_marker_is_stamped_only_for_suppressed_payloads() -> None:
    assert ANSWER_SUPPRESSED not in _delivery(Message("Ping")).package().properties
    failure = _delivery(DeliveryFailure.as_payload("d0", ErrorType.FAILED)).package()
    assert ANSWER_SUPPRESSED in failure.properties


def test_marker_presence_alone_counts_whatever_its_value() -> None:
    packaged = _delivery(Message("Heartbeat", MessageClass.IGNORABLE)).package()
    packaged.properties[ANSWER_SUPPRESSED] = None  # a serialiser may mangle the value
    assert packaged.may_answer() is False


def test_a_payload_type_check_is_blind_after_packaging() -> None:
    """Negative control for the guard: the pre-fix check reads RawJson and so answers."""
    packaged = _delivery(DeliveryFailure.as_payload("d0", ErrorType.NOT_FOUND)).package()
    payload_type_says_answer = not isinstance(packaged.message, DeliveryFailure)
    assert payload_type_says_answer is True
    assert packaged.may_answer() is False


def test_diagnostic_key_travels_on_the_envelope() -> None:
    packaged = _delivery(Message("Update", diagnostic_key="stream/7")).package()
    assert packaged.properties[DIAGNOSTIC_KEY] == "stream/7"
    assert packaged.message.diagnostic_key is None
    assert packaged.diagnostic_key == "stream/7"


def test_json_round_trip_of_the_whole_envelope_keeps_the_policy_and_the_payload() -> None:
    for message in (Message("Heartbeat", MessageClass.IGNORABLE), Message("Ping", reply_to="d0")):
        packaged = _delivery(message).package()
        back = Delivery.from_json(json.loads(json.dumps(packaged.to_json())))
        assert back.may_answer() is packaged.may_answer()
        assert back.message_type == message.type_name
        assert back.message_class is message.message_class
        assert back.unpacked_message().to_json() == message.to_json()


def test_package_keeps_everything_but_the_payload_type() -> None:
    plain = Delivery("d9", "a", "b", Message("Ping"), identity=None,
                     properties={"trace": "x"}, subscription_id="s1")
    packaged = plain.package()
    assert (packaged.id, packaged.sender, packaged.target, packaged.identity,
            packaged.subscription_id) == ("d9", "a", "b", None, "s1")
    assert packaged.properties["trace"] == "x"
    assert packaged.package() is packaged


def test_bad_envelope_json_names_the_missing_key() -> None:
    with pytest.raises(ValueError, match="'sender'"):
        Delivery.from_json({"id": "d1", "target": "b", "message": {"$type": "P", "$class": "user"}})
    with pytest.raises(ValueError, match=r"\$type"):
        Delivery.from_json({"id": "d1", "sender": "a", "target": "b", "message": {}})


def _slots(delivery: Delivery) -> dict[str, object]:
    return {name: getattr(delivery, name) for name in Delivery.__slots__}


@pytest.mark.parametrize("payload", [
    Message("Update", MessageClass.USER, "node/1"),
    Message("Heartbeat", MessageClass.IGNORABLE),
    DeliveryFailure.as_payload("d9", ErrorType.FAILED),
    RawJson('{"$type":"Update","$class":"user"}', "Update", MessageClass.USER),
], ids=["keyed", "ignorable", "failure", "raw"])
@pytest.mark.parametrize("identity", ["user", None])
def test_fresh_delivery_fills_every_slot_as_the_constructor_does(
    payload: Message | RawJson, identity: str | None
) -> None:
    built = Delivery("d1", "a", "b", payload, identity)
    fresh = fresh_delivery("d1", "a", "b", payload, identity)
    assert _slots(fresh) == _slots(built)
    assert fresh.properties is not built.properties  # each envelope its own properties


@pytest.mark.parametrize(("type_name", "message_class", "key"), [
    ("Update", MessageClass.USER, "node/1"),
    ("Heartbeat", MessageClass.IGNORABLE, None),
    ("Shutdown", MessageClass.LIFECYCLE, "silo"),
])
def test_new_message_fills_every_slot_as_the_constructor_does(
    type_name: str, message_class: MessageClass, key: str | None
) -> None:
    fresh = new_message(type_name, message_class, key)
    assert type(fresh) is Message
    assert _message_slots(fresh) == _message_slots(Message(type_name, message_class, key))
    # The control: another key is another message, slot for slot.
    assert _message_slots(fresh) != _message_slots(Message(type_name, message_class, "other"))


def _message_slots(message: Message) -> dict[str, object]:
    return {name: getattr(message, name) for name in Message.__slots__}


def test_slot_comparison_notices_a_slot_that_differs() -> None:
    """Negative control for the comparison above: one differing slot fails it."""
    payload = Message("Update", MessageClass.USER, "node/1")
    fresh = fresh_delivery("d1", "a", "b", payload, "user")
    assert _slots(fresh) != _slots(Delivery("d1", "a", "b", payload, "user", None, "s1"))


_JSON_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(),
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), _JSON_VALUES, max_size=6))
def test_payload_text_is_json_dumps_with_sorted_keys_byte_for_byte(
    data: dict[str, object]
) -> None:
    assert encode_payload(data) == json.dumps(data, sort_keys=True)


def test_payload_text_comparison_sees_key_order() -> None:
    """Negative control: the same dict written in insertion order is other text."""
    data = {"$type": "Update", "$class": "user"}
    assert encode_payload(data) != json.dumps(data)
    assert encode_payload(data) == '{"$class": "user", "$type": "Update"}'
