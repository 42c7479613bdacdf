"""ROLLBACK (docs/reference/rules.md R68): a session goes back to the checkpoint it had before a run
began, so the input that interrupted that run replaces it instead of following it.

The checkpoint before run R began is the newest history entry written by another run
(R's own saves all carry R's ``run_id``). It becomes the session's latest again through an
ordinary save (the next version, fenced by the caller's lease), so History shows the
aborted run's saves and, after them, the restored checkpoint. A session whose first run
was R had no checkpoint before it: the rollback deletes the checkpoint and keeps the
history. Rolling back is idempotent: once done, the latest checkpoint is no longer R's.
"""

from __future__ import annotations

import copy

from ..domain import Lease
from ..store import Capability, Store


async def rollback(
    store: Store, lease: Lease | None, session_id: str, run_id: str, now: float
) -> bool:
    """Put back the checkpoint ``session_id`` had before run ``run_id`` began. Returns
    ``False`` (and changes nothing) when the latest checkpoint is not of that run (already
    rolled back, or another run came since). Raises ``LeaseLost`` when ``lease`` is stale,
    ``NotImplementedError`` for a store without ``Capability.HISTORY``, ``StoreError``."""
    cp = await store.load(session_id)
    if cp is None or cp.run_id != run_id:
        return False
    if Capability.HISTORY not in store.capabilities:
        raise NotImplementedError(f"{type(store).__name__} keeps no history to roll back to")
    before = next(
        (e.checkpoint for e in await store.history(session_id) if e.checkpoint.run_id != run_id),
        None,
    )
    if before is None:
        await store.delete(session_id, keep_history=True, keep_queue=True)
        return True
    restored = copy.deepcopy(before)
    restored.version = cp.version + 1
    restored.updated_at = now
    restored.chain, restored.chain_from = cp.chain, ""  # R91: links to the save it follows
    # Events go on numbering after everything the session's log ever held.
    restored.last_seq = max(cp.last_seq, restored.last_seq)
    await store.save(restored, stored_messages=0, lease=lease)
    return True
