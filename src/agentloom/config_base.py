"""The base of every settings section: unknown keys refused, values frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
