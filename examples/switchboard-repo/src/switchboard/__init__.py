"""switchboard: one dispatcher task serving many inboxes, a latency-table relay, calls with
correlation ids, bounded subscriptions and a staged stop, in plain asyncio."""

import logging

from .board import Switchboard
from .figures import DEFAULT_FIGURES, Figures
from .journal import Journal
from .parcels import Klass, Note, Parcel, Undeliverable

__all__ = ["DEFAULT_FIGURES", "Figures", "Journal", "Klass", "Note", "Parcel", "Switchboard",
           "Undeliverable"]

# The application configures logging; the library only names its logger.
logging.getLogger("switchboard").addHandler(logging.NullHandler())
