"""The Vector Stores API's wire models: stores, their files and file batches (search is in
:mod:`agentloom.api.vector_store_search`)."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictStr,
    Tag,
    model_validator,
)

from agentloom.api.integers import StrictInt64
from agentloom.api.metadata import (
    METADATA_MAX_KEY,
    METADATA_MAX_PAIRS,
    METADATA_MAX_VALUE,
    Metadata,
)
from agentloom.api.wire import Nullable, WireModel

MIN_CHUNK_TOKENS = 100
MAX_CHUNK_TOKENS = 4096
AUTO_CHUNK_TOKENS = 800
AUTO_OVERLAP_TOKENS = 400
MAX_STORE_FILES = 500  # file_ids of one create request
MAX_BATCH_FILES = 2000

AttributeValue: TypeAlias = StrictStr | StrictBool | StrictInt64 | StrictFloat  # 2 stays 2


def check_attributes(value: dict[str, AttributeValue]) -> dict[str, AttributeValue]:
    if len(value) > METADATA_MAX_PAIRS:
        raise ValueError(f"attributes may have at most {METADATA_MAX_PAIRS} pairs")
    for key, item in value.items():
        if len(key) > METADATA_MAX_KEY:
            raise ValueError(f"attribute keys are at most {METADATA_MAX_KEY} characters")
        if isinstance(item, str) and len(item) > METADATA_MAX_VALUE:
            raise ValueError(f"attribute values are at most {METADATA_MAX_VALUE} characters")
    return value


def _scalar(value: object) -> object:
    """One clear message instead of one per member of the value's union."""
    if not isinstance(value, str | int | float):  # bool is an int
        raise ValueError("an attribute value must be a string, a number or a boolean")
    return value


Attributes: TypeAlias = Annotated[
    dict[str, Annotated[AttributeValue, BeforeValidator(_scalar)]],
    AfterValidator(check_attributes),
]
"""A file's ``attributes``: at most 16 pairs; values are strings (up to 512 characters),
numbers or booleans."""


# --- chunking ----------------------------------------------------------------------------------


class StaticChunking(WireModel):
    max_chunk_size_tokens: int = Field(ge=MIN_CHUNK_TOKENS, le=MAX_CHUNK_TOKENS)
    chunk_overlap_tokens: int = Field(ge=0, le=MAX_CHUNK_TOKENS // 2)

    @model_validator(mode="after")
    def _overlap_at_most_half(self) -> StaticChunking:
        if self.chunk_overlap_tokens > self.max_chunk_size_tokens // 2:
            raise ValueError("chunk_overlap_tokens must not exceed half of max_chunk_size_tokens")
        return self


AUTO_CHUNKING = StaticChunking(
    max_chunk_size_tokens=AUTO_CHUNK_TOKENS, chunk_overlap_tokens=AUTO_OVERLAP_TOKENS
)


class AutoChunkingParam(WireModel):
    type: Literal["auto"]


class StaticChunkingParam(WireModel):
    type: Literal["static"]
    static: StaticChunking


def _chunking_tag(value: object) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return "~static" if kind == "static" else "~auto"


ChunkingParam: TypeAlias = Annotated[
    Annotated[AutoChunkingParam, Tag("~auto")] | Annotated[StaticChunkingParam, Tag("~static")],
    Discriminator(_chunking_tag),
]
"""``auto`` or ``static`` (tags of their own: the ``static`` tag would read as the field)."""


class StaticChunkingObject(WireModel):
    """The strategy a file was chunked with (``auto`` is shown as what it resolves to)."""

    type: Literal["static"] = "static"
    static: StaticChunking


def resolve_chunking(param: ChunkingParam | None) -> StaticChunking:
    return param.static if isinstance(param, StaticChunkingParam) else AUTO_CHUNKING


# --- stores ------------------------------------------------------------------------------------


class ExpiresAfter(WireModel):
    anchor: Literal["last_active_at"]
    days: int = Field(ge=1, le=365)


class FileCounts(WireModel):
    in_progress: int
    completed: int
    failed: int
    cancelled: int
    total: int


StoreStatus: TypeAlias = Literal["expired", "in_progress", "completed"]


class IngestionProgress(WireModel):
    """How far ingestion has got (an agentloom extension): of a file being ingested, or of all
    a store's files in progress. ``chunks_total`` counts the chunks of the texts cut so far (a
    file's is unknown until its text is cut: 0 then)."""

    chunks_total: int
    chunks_embedded: int


class VectorStore(WireModel):
    id: str
    object: Literal["vector_store"] = "vector_store"
    created_at: int
    name: str
    usage_bytes: int
    file_counts: FileCounts
    status: StoreStatus
    expires_after: ExpiresAfter | None = None
    expires_at: int | None = None
    last_active_at: Nullable[int] = None
    metadata: dict[str, str] = Field(default_factory=dict)
    progress: IngestionProgress | None = None  # agentloom: while files are in progress


class VectorStoreDeleted(WireModel):
    id: str
    object: Literal["vector_store.deleted"] = "vector_store.deleted"
    deleted: bool = True


FileIds: TypeAlias = Annotated[list[StrictStr], Field(max_length=MAX_STORE_FILES)]


class CreateVectorStoreRequest(WireModel):
    name: str | None = None
    description: str | None = None  # accepted; the VectorStore object has no place for it
    file_ids: FileIds | None = None
    chunking_strategy: ChunkingParam | None = None
    metadata: Metadata | None = None
    expires_after: ExpiresAfter | None = None


class UpdateVectorStoreRequest(WireModel):
    """Omitted fields keep their value; ``expires_after: null`` removes the policy."""

    name: str | None = None
    metadata: Metadata | None = None
    expires_after: ExpiresAfter | None = None


# --- files -------------------------------------------------------------------------------------

FileStatus: TypeAlias = Literal["in_progress", "completed", "cancelled", "failed"]


class LastError(WireModel):
    code: Literal["server_error", "unsupported_file", "invalid_file"]
    message: str


class VectorStoreFile(WireModel):
    id: str  # the file's id
    object: Literal["vector_store.file"] = "vector_store.file"
    created_at: int
    vector_store_id: str
    status: FileStatus
    usage_bytes: int
    last_error: Nullable[LastError] = None
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    chunking_strategy: StaticChunkingObject
    progress: IngestionProgress | None = None  # agentloom: in progress and completed files


class VectorStoreFileDeleted(WireModel):
    id: str
    object: Literal["vector_store.file.deleted"] = "vector_store.file.deleted"
    deleted: bool = True


class CreateVectorStoreFileRequest(WireModel):
    file_id: StrictStr
    attributes: Attributes | None = None
    chunking_strategy: ChunkingParam | None = None


class UpdateVectorStoreFileRequest(WireModel):
    attributes: Attributes | None


class FileContent(WireModel):
    type: Literal["text"] = "text"
    text: str


class FileContentPage(WireModel):
    object: Literal["vector_store.file_content.page"] = "vector_store.file_content.page"
    data: list[FileContent]
    has_more: bool = False
    next_page: Nullable[str] = None


# --- batches -----------------------------------------------------------------------------------


class BatchFile(WireModel):
    file_id: StrictStr
    attributes: Attributes | None = None
    chunking_strategy: ChunkingParam | None = None


class CreateFileBatchRequest(WireModel):
    """``file_ids`` (with shared ``attributes`` / ``chunking_strategy``) or ``files`` (each
    with its own): one of the two."""

    file_ids: Annotated[list[StrictStr], Field(max_length=MAX_BATCH_FILES)] | None = None
    files: Annotated[list[BatchFile], Field(max_length=MAX_BATCH_FILES)] | None = None
    attributes: Attributes | None = None
    chunking_strategy: ChunkingParam | None = None

    @model_validator(mode="after")
    def _one_source(self) -> CreateFileBatchRequest:
        if (self.file_ids is None) == (self.files is None):
            raise ValueError("give either file_ids or files (not both)")
        if not (self.file_ids or self.files):
            raise ValueError("a batch needs at least one file")
        return self

    def entries(self) -> list[BatchFile]:
        """Every file of the batch with its own attributes and chunking strategy."""
        if self.files is not None:
            return self.files
        return [
            BatchFile(
                file_id=file_id,
                attributes=self.attributes,
                chunking_strategy=self.chunking_strategy,
            )
            for file_id in self.file_ids or []
        ]


BatchStatus: TypeAlias = Literal["in_progress", "completed", "cancelled", "failed"]


class VectorStoreFileBatch(WireModel):
    id: str
    object: Literal["vector_store.files_batch"] = "vector_store.files_batch"
    created_at: int
    vector_store_id: str
    status: BatchStatus
    file_counts: FileCounts
