"""TinyMesh: mailboxes, couriers, bounces, watches and the stop, on one virtual clock."""

from __future__ import annotations

from tinymesh.clock import Clock, Pick
from tinymesh.courier import Courier
from tinymesh.letters import Body, Bounce, Letter
from tinymesh.log import Log
from tinymesh.mailbox import SPILL_AT, Mailbox
from tinymesh.replies import Replies
from tinymesh.shutdown import Shutdown
from tinymesh.watch import RETRIES, Watch


def _first(options: int) -> int:
    return 0


class TinyMesh:
    def __init__(self, pick: Pick = _first) -> None:
        self.clock = Clock(pick)
        self.log = Log()
        self.boxes: dict[str, Mailbox] = {}
        self.watches: dict[str, Watch] = {}
        self.courier = Courier(self)
        self.replies = Replies(self)
        self.shutdown = Shutdown(self)
        self.stopped = False
        self._ids = 0

    def new_id(self) -> str:
        self._ids += 1
        return f"t{self._ids}"

    # What a user of the mesh does -------------------------------------------------------

    def open_box(self, address: str, spill_at: int | None = None,
                 storm_threshold: int | None = None) -> Mailbox:
        box = self.boxes.get(address)
        if box is None:
            box = self.boxes[address] = Mailbox(self, address, spill_at or SPILL_AT,
                                                storm_threshold)
            self.log.write(self.clock.now, "box_opened", box=address, spill_at=box.spill_at)
        return box

    def send(self, sender: str, target: str, body: Body, *, caller: str | None,
             routed: bool = True) -> str:
        """Send a letter; routed letters go by courier, the others straight to the intake."""
        self.open_box(sender)  # replies come back to the sender's own mailbox
        letter = Letter(self.new_id(), sender, target, caller, body)
        if routed:
            self.courier.carry(letter)
        elif (box := self.boxes.get(target)) is not None:
            box.offer(letter)
        else:
            self.replies.bounce(letter, "NoSuchHub")
        return letter.id

    def watch(self, subscriber: str, target: str, retries: int = RETRIES) -> str:
        self.open_box(subscriber)
        wid = f"w{len(self.watches) + 1}"
        watch = self.watches[wid] = Watch(self, wid, subscriber, target, retries)
        if self.stopped:
            watch.end()
        else:
            watch.send()
        return wid

    def stop(self, *, graceful: bool = True) -> None:
        self.shutdown.begin(graceful)

    # Operator controls (and faults) -----------------------------------------------------

    def pause(self, address: str, ms: int) -> None:
        if (box := self.boxes.get(address)) is not None:
            box.pause(ms)

    def slow_down(self, address: str, ms: int) -> None:
        self.courier.slow[address] = ms

    def close_box(self, address: str) -> None:
        self.boxes.pop(address, None)

    # Handlers ---------------------------------------------------------------------------

    def on_served(self, letter: Letter) -> None:
        """A letter's turn: a watch's try is answered; a Bounce fails the try it answers."""
        if letter.watch is not None and (watch := self.watches.get(letter.watch)):
            watch.answered()
        body = letter.body
        if isinstance(body, Bounce):
            for watch in self.watches.values():
                if watch.request == body.answers:
                    watch.failed(body.answers, body.reason)
