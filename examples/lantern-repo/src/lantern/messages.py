"""Envelopes (plain dicts, so they cross the wire as they are) and failure answers."""

from __future__ import annotations

from typing import Any

USER = "user"
LIFECYCLE = "lifecycle"
SYSTEM = "system"
IGNORABLE = "ignorable"
FAILURE = "failure"

MESH_IDENTITY = "lantern"

Envelope = dict[str, Any]


def envelope(did: str, sender: str, target: str, type_name: str, cls: str = USER, *,
             key: str | None = None, identity: str | None = "user", packaged: bool = False,
             sub: str | None = None, answers: str | None = None,
             error: str | None = None) -> Envelope:
    return {"id": did, "snd": sender, "tgt": target, "type": type_name, "cls": cls,
            "key": key, "ident": identity, "pkg": packaged, "sub": sub, "ans": answers,
            "err": error}


def may_answer(env: Envelope) -> bool:
    """Only ordinary traffic is answered: never a failure, a heartbeat or a lifecycle note."""
    return env["cls"] in (USER, SYSTEM)


def DeliveryFailure(env: Envelope, error: str, answer_id: str) -> Envelope:
    """The failure answer to `env`: travels back from the target to the sender."""
    return envelope(answer_id, env["tgt"], env["snd"], "DeliveryFailure", FAILURE,
                    identity=MESH_IDENTITY, answers=env["id"], error=error)
