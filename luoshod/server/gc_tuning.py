"""The cyclic garbage collector sized for a daemon holding thousands of waiting runs.

Python's defaults (thresholds 700, 10, 10) are made for short scripts. In the daemon, a
run's per-step objects (the model request, the copy of its transcript, futures, the
coroutine frames of the call) live as long as the model or the tool takes — seconds —
while the young generations are collected every few milliseconds under load. So nearly all
of them survive two young collections and are promoted to the oldest generation, and a
full collection (which walks EVERY tracked object of the process: every run's checkpoint,
frames, gRPC call state, and the ~120,000 objects of the imported modules) ran every
1–2 s, each pausing the event loop for ~0.3 s at 2,000 runs. ``bench/slowruns.py
--gc-probe`` times them with ``gc.callbacks``: 25–40% of the daemon's CPU with thousands
of runs waiting on a slow model or tool, against ~2% in the fast regime (where objects
die young), so a step cost the slow regime 1.3–1.6× the fast regime's CPU. Tuned: 5–7%,
and 0.93–1.13× (README, "Thousands of slow runs").

:func:`tune`, called once the daemon has started (every module imported, the store
open, the server listening):

- ``gc.freeze()`` after one full collection: the start-up objects move to the permanent
  generation, which no collection walks again;
- thresholds raised to :data:`THRESHOLDS`: a young collection every 50,000 allocations
  (not 700), the middle one every 20 of those, so an object must live for a second or more
  of heavy load (not ~0.1 s) to reach the oldest generation, and the oldest is collected
  every 10 middle ones (~10 M allocations; Python also waits until the objects promoted
  since the last full collection are a quarter of those it kept). Cyclic garbage that
  reaches the oldest generation waits for that (minutes at the heaviest load; an idle
  daemon makes none).

Many production Python servers do the same (freeze after start-up, thresholds in the
tens of thousands). ``luoshod serve --no-gc-tuning`` keeps Python's defaults (the
benchmark's ``--gc python`` compares both). The process's own choice, not the daemon's:
tests that start daemons inside pytest leave the test process's collector alone.
"""

from __future__ import annotations

import gc
import logging

log = logging.getLogger("luoshod.server")

#: (young, middle, oldest) collection thresholds; see the module's docstring.
THRESHOLDS = (50_000, 20, 10)


def tune(thresholds: tuple[int, int, int] = THRESHOLDS) -> int:
    """Collect once, freeze what survives (the start-up objects), then set the
    thresholds. Returns the number of objects frozen."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    frozen = gc.get_freeze_count()
    log.debug("gc tuned: %d start-up objects frozen, thresholds %s", frozen, thresholds)
    return frozen


__all__ = ["THRESHOLDS", "tune"]
