"""The serving process, tuned once it has started (``agentloom serve`` only, not embedded apps).

- A started server holds a few hundred thousand long-lived objects (modules, pydantic schemas,
  SQLAlchemy metadata, the embedding model). CPython's full collections walk all of them: a
  request that allocates much (10,000 input items) set one off and stalled the event loop for
  about 100 ms. Everything alive at start-up goes to the permanent generation (``gc.freeze``),
  so full collections walk only what requests made since.
- Young collections run every 50,000 allocations instead of 700, middle ones after 20 of those
  and full ones after 100 of those instead of 10: a request holding 10,000 items keeps hundreds
  of thousands of objects alive, and with the defaults the collector walked them again and
  again (pauses of up to 100 ms measured; about 10 ms with these thresholds). Under 64
  concurrent requests each young collection walks their live objects, whatever the threshold:
  50,000 instead of 10,000 cut the server's CPU a stored response by about 5% (A/B, ``make
  bench``'s load), for a few MB of garbage in cycles waiting longer.
- Large bodies are parsed, and large inputs turned into chat messages, in worker threads. With
  CPython's default switch interval (5 ms) the event loop waits up to 5 ms for the GIL each time
  it gives it up while such a thread runs, and a small request gives it up several times; at
  0.5 ms small requests stay fast beside a large one (``make bench``, hostile input section).
"""

from __future__ import annotations

import gc
import sys

SWITCH_INTERVAL = 0.0005  # seconds a thread may hold the GIL while another waits
GC_THRESHOLDS = (50_000, 20, 100)  # allocations before a young collection; young per older


def settle() -> None:
    """Collect what start-up left behind, freeze what remains, collect less often, shorten the
    switch interval."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)
