"""A node: one asyncio program hosting hubs, serving its peers over TCP, and dialling them.

A post to a hub of this node goes straight onto its intake; a post to another node's hub
travels as a leg over this node's link to that node, and the callee answers once it has
taken it onto the hub's intake. A call is the same journey, answered with the handler's
result. What cannot be delivered is answered to its sender with a DeliveryFailure, where
`may_answer` allows.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .calls import CallFailed, attempts
from .envelope import DeliveryFailure, Envelope, Traffic, may_answer, split_address
from .frames import Frame
from .hooks import Hooks
from .hub import Handler, HandlerRaised, Hub, HubClosed, Intake
from .inbound import Inbound
from .legs import LegBook, Outcome, outcome_of
from .link import Link
from .observer import Observer
from .settings import Roster, Settings
from .shutdown import Phase, Shutdown


class Node:
    def __init__(self, name: str, roster: Roster, *, settings: Settings | None = None,
                 observer: Observer | None = None, hooks: Hooks | None = None) -> None:
        if not roster.knows(name):
            raise ValueError(f"node {name!r} is not in the roster ({roster.names()})")
        self.name = name
        self.roster = roster
        self.settings = settings or Settings()
        self.observer = observer or Observer()
        self.hooks = hooks or Hooks()
        incarnation = roster.incarnation(name)
        # Ids are this node's name and a count, and for a rebuilt node its incarnation too:
        # unique in the mesh, across crashes.
        self._bugs = self.settings.bugs
        self._tag = (name if incarnation == 1 or "n09" in self._bugs
                     else f"{name}@{incarnation}")
        self._shutdown = Shutdown(name, self.settings, self.observer)
        self._hubs: dict[str, Hub] = {}
        self._links: dict[str, Link] = {}
        self._legs = LegBook(name, self.observer, self._shutdown.legs_idle, tag=self._tag)
        self._inbound = Inbound(name, self.settings, self._take_remote,
                                on_idle=self._shutdown.legs_idle)
        self._server: asyncio.Server | None = None
        self._numbered = 0
        self._asked: dict[str, Envelope] = {}  # correlation -> what it carries
        self._highest: dict[str, int] = {}  # sending node's tag -> highest id number taken

    # Building.
    async def start(self) -> None:
        """Listen on the roster's port (an ephemeral one if 0), and record it there."""
        host, port = self.roster.address(self.name)
        self._server = await asyncio.start_server(self._inbound.serve, host, port)
        self.roster.bound(self.name, self._server.sockets[0].getsockname()[1])

    def open_hub(self, hub: str, handler: Handler | None = None, *,
                 watermark: int | None = None, capacity: int | None = None) -> Hub:
        address = f"{self.name}/{hub}"
        split_address(address)
        if hub in self._hubs:
            raise ValueError(f"hub {address} is already open")
        opened = Hub(self.name, address, handler, observer=self.observer, hooks=self.hooks,
                     watermark=self.settings.watermark if watermark is None else watermark,
                     capacity=self.settings.capacity if capacity is None else capacity,
                     bugs=self._bugs)
        self._hubs[hub] = opened
        return opened

    def hub(self, hub: str) -> Hub:
        return self._hubs[hub]

    @property
    def phase(self) -> Phase:
        return self._shutdown.phase

    @property
    def in_flight(self) -> int:
        return self._legs.count

    # Sending.
    def envelope(self, sender: str, target: str, kind: str, body: Any = None, *,
                 traffic: Traffic = Traffic.USER, key: str | None = None,
                 identity: str | None = "user") -> Envelope:
        return Envelope(self._next_id(), sender, target, kind, traffic, body, key, identity)

    def post(self, sender: str, target: str, kind: str, body: Any = None, *,
             traffic: Traffic = Traffic.USER, key: str | None = None,
             identity: str | None = "user") -> str:
        """Send a message on its way; its id. Call from within the running loop."""
        env = self.envelope(sender, target, kind, body, traffic=traffic, key=key,
                            identity=identity)
        self.dispatch(env)
        return env.id

    def dispatch(self, env: Envelope) -> None:
        """Onto a hub of this node, or as a leg to the target's node."""
        try:
            node, hub = split_address(env.target)
        except ValueError:
            self._answer(env, "NotFound")
            return
        if node == self.name:
            target = self._hubs.get(hub)
            if target is None:
                self._answer(env, "NotFound")
            else:
                target.offer(env, packaged=False)
            return
        if not self.roster.knows(node):
            self._answer(env, "NotFound")
            return
        if (refusal := self._refusal(env)) is not None:
            self.observer.dispatch_refused(self.name, env, error=refusal)
            self._answer(env, refusal)
            return
        kind = "answer" if env.traffic is Traffic.FAILURE else "post"
        self._legs.open(kind, env, node, self._carry(env, node))

    async def call(self, sender: str, target: str, kind: str, body: Any = None, *,
                   traffic: Traffic = Traffic.USER, key: str | None = None,
                   identity: str | None = "user") -> Any:
        """The target hub's handler's result for this message; CallFailed if none comes."""
        env = self.envelope(sender, target, kind, body, traffic=traffic, key=key,
                            identity=identity)
        try:
            node, _ = split_address(target)
        except ValueError:
            node = ""
        if node == self.name:
            outcome = await self._attempts(env, node, "result")
        elif not self.roster.knows(node):
            outcome = Outcome(ok=False, error="NotFound")
        elif (refusal := self._refusal(env)) is not None:
            self.observer.dispatch_refused(self.name, env, error=refusal)
            outcome = Outcome(ok=False, error=refusal)
        else:
            leg = self._legs.open("call", env, node, self._attempts(env, node, "result"))
            outcome = await outcome_of(leg)
        if not outcome.ok:
            raise CallFailed(env.id, target, outcome.error or "Failed", outcome.timed_out)
        return outcome.value

    def _refusal(self, env: Envelope) -> str | None:
        """Why a dispatch to another node is refused at its source, if it is."""
        if self.phase is Phase.RUNNING:
            return None
        if self.phase is Phase.STOPPING and env.traffic is Traffic.FAILURE:
            return None  # answers still travel while the stop holds
        return "ShuttingDown"

    async def _carry(self, env: Envelope, peer: str) -> Outcome:
        """A post's leg: its attempts, then its failure answer (part of the leg, so the
        stop's hold waits for the answer too)."""
        outcome = await self._attempts(env, peer, "taken")
        if "n10" in self._bugs and outcome.error == "Unreachable":
            # The peer is down: its sender hears of it now, not after its own timeout.
            self._answer(env, "Unreachable")
        error = outcome.error or "Failed"
        if "n11" in self._bugs and outcome.timed_out and not await self._reachable(peer):
            error = "Unavailable"  # not merely slow: the peer does not even take a dial
        if not outcome.ok:
            self._answer(env, error)
        return outcome

    async def _reachable(self, peer: str) -> bool:
        """Whether `peer` takes a dial now (the connection is closed again at once)."""
        host, port = self.roster.address(peer)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port),
                                               self.settings.connect_timeout_ms / 1000)
        except (OSError, TimeoutError):
            return False
        writer.close()
        return True

    async def _attempts(self, env: Envelope, callee: str, want: str) -> Outcome:
        timeout = self.settings.response_timeout_ms / 1000

        async def local(attempt: int) -> Frame:
            reply = await asyncio.wait_for(self._take(env, attempt, want, packaged=False),
                                           timeout)
            if reply is None:  # the reply was lost: the caller waits out its timeout
                await asyncio.sleep(timeout)
                raise TimeoutError
            return reply

        async def remote(attempt: int) -> Frame:
            correlation = f"{env.id}#{attempt}"
            if "n12" in self._bugs:
                self._asked[correlation] = env
            reply = await self._link(callee).request(correlation, {
                "op": "send", "cid": correlation, "attempt": attempt, "want": want,
                "env": env.to_wire()})
            try:
                return await asyncio.wait_for(reply, timeout)
            except TimeoutError:
                self._link(callee).forget(correlation)
                raise

        return await attempts(self.name, env, callee, local if callee == self.name else remote,
                              settings=self.settings, observer=self.observer, hooks=self.hooks)

    def _late(self, correlation: str, frame: Frame) -> None:
        """A reply that came after its caller gave up: a refusal in it is still news (the
        callee never took it), so its sender learns why."""
        env = self._asked.pop(correlation, None)
        if env is not None and frame.get("outcome") == "refused":
            self._answer(env, str(frame.get("error")))

    def _link(self, peer: str) -> Link:
        if peer not in self._links:
            self._links[peer] = Link(self.name, peer, roster=self.roster,
                                     settings=self.settings, observer=self.observer,
                                     on_late=self._late if "n12" in self._bugs else None)
        return self._links[peer]

    # Failure answers.
    def _answer(self, env: Envelope, error: str) -> None:
        """Tell `env`'s sender it could not be delivered, where it may be told."""
        if not may_answer(env):
            self.observer.answer_withheld(self.name, env, reason="may_answer_false")
            return
        if self.phase in (Phase.DETACHED, Phase.STOPPED):
            self.observer.answer_withheld(self.name, env, reason="stopped")
            return
        answer = DeliveryFailure(env.id, error).envelope(self._next_id(), env,
                                                         vouched_by=self.name)
        self.observer.failure_sent(self.name, answer, answers=env.id, error=error)
        self.dispatch(answer)

    # Receiving: the callee's side of an attempt, local or remote.
    async def _take_remote(self, env: Envelope, attempt: int, want: str) -> Frame | None:
        return await self._take(env, attempt, want, packaged=True)

    async def _take(self, env: Envelope, attempt: int, want: str, *,
                    packaged: bool) -> Frame | None:
        """Refuse the attempt, or take it onto the hub's intake; the reply frame (None if
        the reply is lost). `want` 'taken' answers once taken, 'result' with the result."""
        if "n02" in self._bugs and attempt == 0 and packaged and self._copy(env):
            return {"outcome": "taken"}  # a copy of one taken already: acknowledged again
        refusal = self._refusal(env) or await self.hooks.before_take(self.name, env, attempt)
        hub = self._hub_at(env.target)
        if refusal is None and hub is not None and hub.full:
            refusal = "Rejected"
        if refusal is not None:
            self.observer.refused(self.name, env, attempt=attempt, error=refusal)
            return {"outcome": "refused", "error": refusal}
        if hub is None:
            if "n07" in self._bugs and want == "taken":
                self._answer(env, "NotFound")  # the callee knows best: tell the sender
            return {"outcome": "failed", "error": "NotFound"}
        self.observer.taken(self.name, env, attempt=attempt)
        if "n02" in self._bugs:
            tag, _, number = env.id.rpartition(".")
            if number.isdigit():
                self._highest[tag] = max(self._highest.get(tag, 0), int(number))
        result = asyncio.get_running_loop().create_future() if want == "result" else None
        intake = hub.offer(env, packaged=packaged, reply=result)
        if self.hooks.lose_reply(self.name, env, attempt):
            if result is not None:
                result.cancel()
            return None
        if result is None and "n03" in self._bugs and intake is Intake.UNVOUCHED:
            return {"outcome": "failed", "error": "Unvouched"}  # so its sender learns why
        if result is None:
            return {"outcome": "taken"}  # a post's journey ends at the intake, whatever it says
        if intake is not Intake.QUEUED:
            return {"outcome": "failed", "error": intake.value.capitalize()}
        try:
            return {"outcome": "result", "value": await result}
        except (HandlerRaised, HubClosed) as exc:
            return {"outcome": "failed", "error": type(exc).__name__}

    def _copy(self, env: Envelope) -> bool:
        """Whether a first attempt is a copy of one already taken: a node numbers what it
        sends in order, so an id at or below the highest taken from it was seen."""
        tag, _, number = env.id.rpartition(".")
        return number.isdigit() and int(number) <= self._highest.get(tag, 0)

    def _hub_at(self, address: str) -> Hub | None:
        try:
            node, hub = split_address(address)
        except ValueError:
            return None
        return self._hubs.get(hub) if node == self.name else None

    # The staged stop.
    async def stop(self, graceful: bool = True) -> None:
        """Stop in stages (shutdown.py). Called again with graceful=False while a graceful
        stop holds, the host has given up on it: the hold ends at once."""
        await self._shutdown.stop(graceful, self._legs, detach=self._detach,
                                  disconnect=self._disconnect,
                                  answering=lambda: self._inbound.answering)

    async def _detach(self) -> None:
        for hub in self._hubs.values():
            await hub.close()

    async def _disconnect(self) -> None:
        for link in self._links.values():
            await link.close()
        await self._inbound.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def _next_id(self) -> str:
        self._numbered += 1
        return f"{self._tag}.{self._numbered}"


def make_node(name: str, roster: Roster, *, settings: Settings | None = None,
              observer: Observer | None = None, hooks: Hooks | None = None) -> Node:
    """A node named `name`, listening where `roster` says; not started (`await start()`).

    A node that crashed is rebuilt by calling this again with the same name and roster:
    the roster keeps the port it bound, and peers dial it again on their next request.
    """
    return Node(name, roster, settings=settings, observer=observer, hooks=hooks)
