"""Bugs planted in the tinymesh example: each a small patch of its source, and what the
harness says about it.

`caught` is the harness's answer today: each item that fails, and a line of its output
(an fnmatch pattern) that names the invariant or rule. A bug with no `caught` is one the
harness does not see on this mesh (a blind spot); `blind_spot` says why. The tests hold
both: a caught bug must keep failing with its line, a blind spot must keep passing until
the harness learns to see it (then the entry moves to the caught ones).
"""

from __future__ import annotations

from dataclasses import dataclass

INV = "harness::{}[tinymesh.harness_adapter:make]"


@dataclass(frozen=True)
class Bug:
    name: str
    path: str  # under the example repo
    edits: tuple[tuple[str, str], ...]  # (old, new): each old text occurs exactly once
    expected: str  # the invariant (or rule) that exists for this bug
    select: str  # the -k expression of the items the test runs
    caught: tuple[tuple[str, str], ...]  # (failing item, a line of its output); () if blind
    blind_spot: str = ""


# The seed silo's stage numbers in place of TinyMesh's: with `stop_stages` left at
# TinyMesh's the hold goes unrecognised (INV5 not exercised); with it following, INV5 passes.
SEED_STAGES = ("SERVING, DETACHING, FINAL = 300, 200, 100\n",
               "SERVING, DETACHING, FINAL = 20_000, 19_998, 100\n")

_REFUSED = ('            log.write(now, "refused", box=self.address, letter=letter.id, '
            'error="CalleeRefused")\n')

BUGS: tuple[Bug, ...] = (
    Bug("answer-a-refusal", "src/tinymesh/mailbox.py",
        ((_REFUSED, _REFUSED + '            self.mesh.replies.bounce(letter, "CalleeRefused")\n'),),
        "INV1", "INV1",
        ((INV.format("INV1"), "INV1: DeliveryFailure answers rejected post *"),)),
    Bug("spill-requests", "src/tinymesh/mailbox.py",
        (("        if body.kind in SPILLABLE and depth >= self.spill_at:\n",
          "        if depth >= self.spill_at:\n"),),
        "INV3", "INV3",
        ((INV.format("INV3"), "INV3: user message * shed at *"),)),
    Bug("key-without-topic", "src/tinymesh/breaker.py",
        (("    return (sender, target, subject, topic)\n",
          "    return (sender, target, subject, None)\n"),),
        "INV6", "INV6",
        ((INV.format("INV6"), "INV6: breaker dropped * though its key had only 1 message(s)*"),)),
    Bug("no-stop-hold", "src/tinymesh/shutdown.py",
        (("        if not self.graceful or not courier.in_flight:\n",
          "        if True:  # no hold\n"),),
        "INV5", "INV5",
        ((INV.format("INV5"), "INV5: stop left Active with * leg(s) in flight after 0 ms*"),)),
    Bug("bounce-answers-bounce", "src/tinymesh/replies.py",
        (("        if not letter.can_reply():\n",
          "        if False:  # every letter may be answered\n"),),
        "INV1", "INV1 or INV7 or scan",
        (("src/tinymesh/replies.py::harness-scan", "src/tinymesh/replies.py:*:* MESH001 *"),
         (INV.format("INV1"), "INV1: DeliveryFailure answers DeliveryFailure * (amplification*"),
         (INV.format("INV7"), "INV7: ignorable delivery * was answered (must never be)*"))),
    Bug("unbounded-rewatch", "src/tinymesh/watch.py",
        (("        if self.tries <= self.retries:\n",
          '        if self.tries <= self.retries or cause == "NoSuchHub":\n'),),
        "INV2", "INV2",
        ((INV.format("INV2"), "INV2: subscription * made more than 4 attempts (3 retries)*"),)),
    Bug("detached-return", "src/tinymesh/replies.py",
        (("from tinymesh.letters import Bounce, Letter\n",
          "from tinymesh.letters import Bounce, Letter, package\n"),
         ('        mesh.courier.carry(notice, trip="return")\n',
          "        if (home := mesh.boxes.get(letter.sender)) is not None:\n"
          "            mesh.clock.after(1, lambda: home.offer(package(notice)))\n")),
        "INV5", "INV5 or scan",
        (("src/tinymesh/replies.py::harness-scan", "src/tinymesh/replies.py:*:* MESH004 *"),
         (INV.format("INV5"), "INV5: routed delivery landed after the stop completed*"))),
    Bug("reply-guard-reads-the-body", "src/tinymesh/letters.py",
        (("        if QUIET_MARK in self.marks:\n",
          "        if isinstance(self.body, Bounce):\n"),),
        "INV7", "INV7 or scan",
        (("src/tinymesh/letters.py::harness-scan", "src/tinymesh/letters.py:*:* MESH002 *"),
         (INV.format("INV7"), "INV7: packaged ignorable delivery * was answered*"))),
    Bug("dispatch-while-stopping", "src/tinymesh/shutdown.py",
        (("        mesh.courier.closing = True\n", "        mesh.courier.closing = False\n"),),
        "INV5", "INV5",
        ((INV.format("INV5"), "INV5: route leg * dispatched after the stop began*"),)),
    Bug("hold-past-the-budget", "src/tinymesh/shutdown.py",
        (("BUDGET_MS = 20_000\n", "BUDGET_MS = 60_000\n"),),
        "INV5", "INV5",
        ((INV.format("INV5"), "INV5: stop held Active for * ms (budget 20000 ms)*"),)),
    Bug("no-identity-guard", "src/tinymesh/mailbox.py",
        (("        if letter.caller is None and body.kind is not Kind.SYSTEM:\n",
          "        if False:  # anyone may post\n"),),
        "INV1", "INV1",
        ((INV.format("INV1"),
          "INV1: the harness posted * with no identity, yet * enqueued it: the identity "
          "guard let it through*"),)),
    Bug("spill-below-the-watermark", "src/tinymesh/mailbox.py",
        (("        if body.kind in SPILLABLE and depth >= self.spill_at:\n",
          "        if body.kind in SPILLABLE and depth >= self.spill_at - 1:\n"),),
        "INV3", "INV3",
        ((INV.format("INV3"), "INV3: message * shed at h0 at depth 24 below watermark 25*"),)),
    Bug("non-graceful-stop-holds", "src/tinymesh/shutdown.py",
        (("        if not self.graceful or not courier.in_flight:\n",
          "        if not courier.in_flight:\n"),),
        "INV5", "INV5",
        ((INV.format("INV5"), "INV5: a non-graceful stop holds*"),)),
    Bug("no-leftovers-named", "src/tinymesh/shutdown.py",
        (("        if why == \"budget\":\n", "        if False:\n"),),
        "INV5", "INV5",
        ((INV.format("INV5"), "INV5: residual legs logged [], but in flight at expiry *"),)),
    Bug("breaker-counts-chatter", "src/tinymesh/breaker.py",
        (("UNCOUNTED = frozenset({Kind.CONTROL, Kind.CHATTER, Kind.BOUNCE})\n",
          "UNCOUNTED: frozenset[Kind] = frozenset()\n"),),
        "INV3", "INV3",
        ((INV.format("INV3"),
          "INV3: per-key breaker counted ignorable traffic at * (breaker_tripped)*"),)),
)
