"""Frames, envelopes and the answer guard."""

from __future__ import annotations

import asyncio

import pytest
from meshkit import run

from nodemesh import DeliveryFailure, Envelope, Traffic, may_answer, split_address
from nodemesh.frames import FrameError, encode, read_frame


async def _read(data: bytes, frames: int, limit: int) -> list[object]:
    reader = asyncio.StreamReader()  # made inside the loop it reads on
    reader.feed_data(data)
    reader.feed_eof()
    return [await read_frame(reader, limit) for _ in range(frames)]


def test_frames_round_trip_and_a_clean_end_reads_none() -> None:
    data = encode({"a": 1}, 100) + encode({"b": [2]}, 100)
    assert run(_read(data, 3, 100)) == [{"a": 1}, {"b": [2]}, None]


@pytest.mark.parametrize("data", [
    encode({"a": "x" * 50}, 1000),       # longer than the reader's limit
    encode({"a": 1}, 100)[:-2],          # cut inside the frame
    b"\x00\x00",                         # cut inside the header
    b"\x00\x00\x00\x02[]",               # JSON, but not an object
])
def test_bad_frames_are_refused(data: bytes) -> None:
    with pytest.raises(FrameError):
        run(_read(data, 1, 20))


def test_a_frame_too_large_is_not_sent() -> None:
    with pytest.raises(FrameError):
        encode({"a": "x" * 50}, 20)


def test_envelope_crosses_the_wire_with_its_traffic_class() -> None:
    env = Envelope("n1.1", "n1/a", "n2/b", "Ping", Traffic.HEARTBEAT, {"k": 1}, "s1", None)
    assert Envelope.from_wire(env.to_wire()) == env
    with pytest.raises(ValueError):
        Envelope.from_wire({"id": 1, "sender": "a", "target": "b", "kind": "c"})


@pytest.mark.parametrize(("traffic", "answered"), [
    (Traffic.USER, True), (Traffic.SYSTEM, True),
    (Traffic.FAILURE, False), (Traffic.HEARTBEAT, False), (Traffic.LIFECYCLE, False),
])
def test_may_answer_reads_the_traffic_class(traffic: Traffic, answered: bool) -> None:
    assert may_answer(Envelope("n1.1", "n1/a", "n2/b", "X", traffic)) is answered


def test_a_delivery_failure_goes_back_to_the_sender_and_is_never_answered() -> None:
    failed = Envelope("n1.1", "n1/a", "n2/b", "X")
    answer = DeliveryFailure("n1.1", "NotFound").envelope("n2.7", failed)
    assert (answer.sender, answer.target, answer.traffic) == ("n2/b", "n1/a", Traffic.FAILURE)
    assert DeliveryFailure.read(answer) == DeliveryFailure("n1.1", "NotFound")
    assert not may_answer(answer)


@pytest.mark.parametrize("address", ["n1", "/hub", "n1/", "n1/a/b"])
def test_addresses_are_node_slash_hub(address: str) -> None:
    assert split_address("n1/alice") == ("n1", "alice")
    with pytest.raises(ValueError):
        split_address(address)
