"""AIO001 hub-turn-awaits-call: a hub's turn never waits for another hub's answer.

A hub serves its queue one message per turn: its pump (`Hub._pump`) takes a message and
hands it to the handler (`Mesh.handle`). A turn that awaits a call to another hub holds
every message queued behind it until that answer comes, up to the call's response
timeout, and two hubs that call each other from their turns wait each other out. A turn
sends instead (`mesh.post(..., route="call")` starts a leg of its own) and takes the
answer as a message of its own.
"""

from __future__ import annotations

import libcst as cst

from invariants.scan.api import FileContext, InvalidExample, Names, Rule, last_part

RULE_ID = "AIO001"

# The functions that run in a hub's turn: qualified names, matched on whole trailing
# components (`_pump` is the pump of Hub and of any hub class).
HUB_TURNS = Names("hub_turns", ("_pump", "Mesh.handle"))
# The calls that wait for another hub's answer, by their last name.
HUB_CALLS = Names("hub_calls", ("deliver", "_call"))


def applies(ctx: FileContext) -> bool:
    return not ctx.is_test


def prefilter(ctx: FileContext) -> bool:
    """Only a file that awaits one of the calls, by name, can be reported."""
    return "await" in ctx.text and any(
        last_part(name) in ctx.text for name in HUB_CALLS.of(ctx.config))


def _is_turn(symbol: str, turns: tuple[str, ...]) -> bool:
    return any(symbol == turn or symbol.endswith(f".{turn}") for turn in turns)


def check(ctx: FileContext) -> None:
    turns = HUB_TURNS.of(ctx.config)
    calls = {last_part(name) for name in HUB_CALLS.of(ctx.config)}
    for record in ctx.calls:
        awaited = record.ancestors[-1] if record.ancestors else None
        if not isinstance(awaited, cst.Await) or not _is_turn(record.symbol, turns):
            continue  # a closure defined in the turn runs outside it: its own symbol
        name = ctx.name_of(record.node.func)
        if name is None or last_part(name) not in calls:
            continue
        ctx.report(
            RULE_ID, awaited,
            f"the hub's turn ({record.symbol}) awaits {last_part(name)}(), a call to another "
            "hub: every message queued behind it waits for that answer; send the call as a "
            "leg of its own and take the answer as a message",
            record.symbol,
        )


VALID: tuple[str, ...] = (
    # the pump awaits only its own queue and gate; the handler is synchronous
    """
class Hub:
    async def _pump(self):
        while True:
            env = await self.queue.get()
            await self._open.wait()
            self.mesh.handle(self, env)
""",
    # a turn that calls another hub sends the call as a leg of its own
    """
class Mesh:
    def handle(self, hub, env):
        if env.body.type_name == "Forward":
            self.post(hub.address, "next", env.body, route="call")
""",
    # a leg awaits the call: legs are not turns
    """
class Legs:
    async def _route(self, leg):
        return await self.mesh.calls.deliver(leg.env)
""",
)

INVALID: tuple[InvalidExample, ...] = (
    (
        """
class RelayHub(Hub):
    async def _pump(self):
        while True:
            env = await self.queue.get()
            await self.mesh.calls.deliver(env)
""",
        (6,),
    ),
    (
        """
class Mesh:
    async def handle(self, hub, env):
        reply = await self.calls._call(env, 0)
        return reply
""",
        (4,),
    ),
)

HUB_TURN_AWAITS_CALL = Rule(
    RULE_ID,
    "hub-turn-awaits-call",
    "A hub's turn awaits a call to another hub.",
    applies,
    check,
    VALID,
    INVALID,
    options=(HUB_TURNS, HUB_CALLS),
    prefilter=prefilter,
)
