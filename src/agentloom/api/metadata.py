"""``metadata``: at most 16 string pairs, keys up to 64 characters, values up to 512 (OpenAI)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

from pydantic import AfterValidator

METADATA_MAX_PAIRS = 16
METADATA_MAX_KEY = 64
METADATA_MAX_VALUE = 512


def check_metadata(value: dict[str, str]) -> dict[str, str]:
    if len(value) > METADATA_MAX_PAIRS:
        raise ValueError(f"metadata may have at most {METADATA_MAX_PAIRS} pairs")
    for key, item in value.items():
        if len(key) > METADATA_MAX_KEY:
            raise ValueError(f"metadata keys are at most {METADATA_MAX_KEY} characters")
        if len(item) > METADATA_MAX_VALUE:
            raise ValueError(f"metadata values are at most {METADATA_MAX_VALUE} characters")
    return value


Metadata: TypeAlias = Annotated[dict[str, str], AfterValidator(check_metadata)]
"""A validated ``metadata`` object."""
