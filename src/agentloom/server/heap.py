"""The serving process's heap, kept out of the garbage collector's way.

A started server holds a few hundred thousand long-lived objects (modules, pydantic schemas,
SQLAlchemy metadata, the embedding model). CPython's full collections walk all of them: a
request that allocates much (10,000 input items) set one off and stalled the event loop for
about 100 ms. :func:`settle` moves everything alive at start-up to the permanent generation
(``gc.freeze``), so full collections walk only what requests made since.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect what start-up left behind, then freeze what remains."""
    gc.collect()
    gc.freeze()
