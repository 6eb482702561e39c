"""Reading a ``.safetensors`` file without the safetensors package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["read_safetensors"]

_DTYPES: Final = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, NDArray[np.generic]]:
    """The tensors of a ``.safetensors`` file: an 8-byte little-endian header length, a JSON
    header (name -> dtype, shape, byte offsets into the data that follows), the raw data.

    They are read-only views of the memory-mapped file, so server processes on one machine
    share the pages instead of each holding a copy."""
    with path.open("rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors: dict[str, NDArray[np.generic]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        dtype = np.dtype(_DTYPES[spec["dtype"]]).newbyteorder("<")
        tensors[name] = data[start:end].view(dtype).reshape(spec["shape"])
    return tensors
