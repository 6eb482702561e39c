"""The Batch API's wire models, as the ``openai`` SDK shapes them (``openai.types.Batch``,
``BatchCreateParams``), and the lines of its input and output files."""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

from pydantic import Field

from agentloom.api.files import ExpiresAfter
from agentloom.api.metadata import Metadata
from agentloom.api.wire import Nullable, WireModel

BatchEndpoint: TypeAlias = Literal[
    "/v1/responses", "/v1/chat/completions", "/v1/embeddings", "/v1/completions"
]
ENDPOINTS: tuple[str, ...] = get_args(BatchEndpoint)
# OpenAI's other batch endpoints, which this server does not run: refused by name.
OPENAI_ONLY_ENDPOINTS = frozenset(
    {"/v1/moderations", "/v1/images/generations", "/v1/images/edits", "/v1/videos"}
)
COMPLETION_WINDOW = "24h"  # the only window OpenAI takes

BatchStatus: TypeAlias = Literal[
    "validating",
    "failed",
    "in_progress",
    "finalizing",
    "completed",
    "expired",
    "cancelling",
    "cancelled",
]
ENDED: frozenset[str] = frozenset({"failed", "completed", "expired", "cancelled"})


class CreateBatchRequest(WireModel):
    """``POST /v1/batches``. ``endpoint`` and ``completion_window`` are checked by the service,
    so that what OpenAI has and this server does not is refused by name."""

    input_file_id: str = Field(min_length=1, max_length=128)
    endpoint: str = Field(min_length=1, max_length=64)
    completion_window: str = Field(min_length=1, max_length=16)
    metadata: Metadata | None = None
    output_expires_after: ExpiresAfter | None = None


class BatchError(WireModel):
    code: str | None = None
    line: int | None = None
    message: str | None = None
    param: str | None = None


class BatchErrors(WireModel):
    object: Literal["list"] = "list"
    data: list[BatchError]


class BatchRequestCounts(WireModel):
    completed: int
    failed: int
    total: int


class InputTokensDetails(WireModel):
    cached_tokens: int = 0


class OutputTokensDetails(WireModel):
    reasoning_tokens: int = 0


class BatchUsage(WireModel):
    input_tokens: int
    input_tokens_details: InputTokensDetails = Field(default_factory=InputTokensDetails)
    output_tokens: int
    output_tokens_details: OutputTokensDetails = Field(default_factory=OutputTokensDetails)
    total_tokens: int


class Batch(WireModel):
    id: str
    object: Literal["batch"] = "batch"
    endpoint: str
    model: str | None = None
    errors: BatchErrors | None = None
    input_file_id: str
    completion_window: str
    status: BatchStatus
    output_file_id: str | None = None
    error_file_id: str | None = None
    created_at: int
    in_progress_at: int | None = None
    expires_at: int | None = None
    finalizing_at: int | None = None
    completed_at: int | None = None
    failed_at: int | None = None
    expired_at: int | None = None
    cancelling_at: int | None = None
    cancelled_at: int | None = None
    request_counts: BatchRequestCounts
    usage: BatchUsage | None = None
    metadata: dict[str, str] | None = None


class InputLine(WireModel):
    """One line of a batch's input file: a request to ``url``."""

    custom_id: str = Field(min_length=1, max_length=512)
    method: str
    url: str
    body: dict[str, object]


class LineError(WireModel):
    """Why a request of a batch got no answer at all (``batch_expired``, ``batch_cancelled``)."""

    code: str
    message: str


class LineResponse(WireModel):
    status_code: int
    request_id: str
    body: dict[str, object]


class OutputLine(WireModel):
    """One line of a batch's output or error file."""

    id: str
    custom_id: str
    response: Nullable[LineResponse] = None  # null on both, as OpenAI writes them
    error: Nullable[LineError] = None
