"""What every record shares: frozen, no unknown fields, no number JSON cannot carry."""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# An integer the store and every client can hold (SQLite's INTEGER, a signed 64-bit column).
INT64 = 2**63 - 1

Count = Annotated[int, Field(ge=0, le=INT64)]
Ms = Annotated[int, Field(ge=0, le=INT64)]  # a time in milliseconds since the epoch
Usd = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Text = Annotated[str, Field(max_length=100_000)]
# An optional time's bounds, given on the field (`int | None = Field(**MS)`) rather than inside the
# union: a model deriving its field's type from the record's (the API's responses) takes the type alone.
MS = {"ge": 0, "le": INT64}


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
