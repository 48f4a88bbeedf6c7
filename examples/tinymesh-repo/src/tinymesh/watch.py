"""Watches: a bounded subscribe. A few tries, each with a timeout, then a terminal end.

A try fails when its request bounces or times out; after `retries` retries the watch
gives up and sends nothing more. No caller can ask for more than `MAX_RETRIES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinymesh.clock import Timer
from tinymesh.letters import Kind, Letter, Plain

if TYPE_CHECKING:
    from tinymesh.mesh import TinyMesh

RETRIES = 3
MAX_RETRIES = 5
TRY_TIMEOUT_MS = 2_000
BACKOFF_MS = 100  # before the first retry, doubled for each one after


class Watch:
    def __init__(self, mesh: TinyMesh, wid: str, subscriber: str, target: str,
                 retries: int = RETRIES) -> None:
        self.mesh = mesh
        self.id = wid
        self.subscriber = subscriber
        self.target = target
        self.retries = min(max(retries, 0), MAX_RETRIES)
        self.tries = 0
        self.request: str | None = None  # the id of the current try's letter
        self.done = False
        self._timer: Timer | None = None

    def send(self) -> None:
        if self.done:
            return
        mesh = self.mesh
        letter = Letter(mesh.new_id(), self.subscriber, self.target, "tinymesh",
                        Plain("Watch", Kind.REQUEST), watch=self.id)
        self.request = letter.id
        mesh.log.write(mesh.clock.now, "watch_try", box=self.subscriber, watch=self.id,
                       try_no=self.tries, target=self.target, letter=letter.id)
        self.tries += 1
        self._timer = mesh.clock.after(TRY_TIMEOUT_MS, lambda: self.failed(letter.id, "timeout"))
        mesh.courier.carry(letter)

    def answered(self) -> None:
        if self.done:
            return
        self._finish("watch_ok")

    def failed(self, request: str, cause: str) -> None:
        if self.done or request != self.request:
            return  # a late answer to an earlier try: that try was already given up
        if self._timer is not None:
            self._timer.cancel()
        if self.tries <= self.retries:
            self._timer = self.mesh.clock.after(BACKOFF_MS << (self.tries - 1), self.send)
        else:
            self._finish("watch_gave_up", why=f"gave_up:{cause}")

    def end(self) -> None:
        """The mesh stopped: the watch ends here, whatever it was waiting for."""
        if not self.done:
            self._finish("watch_gave_up", why="stopped")

    def _finish(self, what: str, **fields: object) -> None:
        self.done = True
        if self._timer is not None:
            self._timer.cancel()
        self.mesh.log.write(self.mesh.clock.now, what, box=self.subscriber, watch=self.id,
                            try_no=self.tries - 1, **fields)
