"""What ``AsyncWatch`` and ``Watch`` (the Watch RPC's two streams) share: the cursor.

A watch yields the session's events with ``seq > after_seq``: first what the daemon's
event log still keeps, then live events until the session's current run ends (or, with
``follow=True``, until you close it). ``last_seq`` is the seq of the last numbered event
seen (``text.delta`` is progress only, seq 0, and never moves it), so a watch that broke
off resumes without gaps or repeats as ``watch(session_id, after_seq=w.last_seq)``.
"""

from __future__ import annotations

from luosho.v1 import agent_pb2

__all__ = ["WatchCursor"]


class WatchCursor:
    def __init__(self, session_id: str, after_seq: int) -> None:
        self.session_id = session_id
        # The resume point: pass it as after_seq to watch again from here.
        self.last_seq = after_seq
        self._closed = False

    def _advance(self, event: agent_pb2.Event) -> agent_pb2.Event:
        if event.seq:  # the last numbered event seen, even if the daemon numbered anew
            self.last_seq = event.seq
        return event
