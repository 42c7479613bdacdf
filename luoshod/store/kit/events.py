"""What every driver's event log shares: seqs within the integers a database holds."""

from __future__ import annotations

#: The largest seq (and read limit) a driver is asked to handle: a signed 64-bit integer.
MAX_SEQ = 2**63 - 1


def clamp_seq(n: int) -> int:
    """``n`` within ``0..MAX_SEQ``: for seqs, which are positive, the same ``after_seq``
    (or ``limit``), in a range every database's integers hold."""
    return min(max(n, 0), MAX_SEQ)
