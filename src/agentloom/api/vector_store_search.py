"""``POST /v1/vector_stores/{id}/search``: the request and the page of results."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import AfterValidator, Field

from agentloom.api.filters import FilterParam
from agentloom.api.vector_stores import AttributeValue
from agentloom.api.wire import Nullable, WireModel

MAX_QUERIES = 16
MAX_QUERY_CHARS = 4096
DEFAULT_RESULTS = 10
MAX_RESULTS = 50

SearchMode: TypeAlias = Literal["hybrid", "vector", "keyword"]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("a query must not be empty")
    return value


Query: TypeAlias = Annotated[str, Field(max_length=MAX_QUERY_CHARS), AfterValidator(_not_blank)]


RANK_FIELDS = ("score",)
"""What results can be ranked by: their relevance ``score``, best first (what every search does)."""


def _rankable(fields: list[str]) -> list[str]:
    for name in fields:
        if name not in RANK_FIELDS:
            raise ValueError(
                f"results can only be ranked by {', '.join(repr(f) for f in RANK_FIELDS)} (their "
                f"relevance, best first); '{name}' is not a field they can be ranked by"
            )
    return fields


RankFields: TypeAlias = Annotated[
    list[str], Field(min_length=1, max_length=8), AfterValidator(_rankable)
]
"""``ranking_options.rank_fields`` (Llama Stack's): the fields results are ranked by. Only
``["score"]``, the ranking every search makes; any other field is refused by name."""


class HybridSearch(WireModel):
    """How much the embedding match and the keyword match weigh in a hybrid score."""

    embedding_weight: float = Field(default=1.0, ge=0)
    text_weight: float = Field(default=1.0, ge=0)


class RankingOptions(WireModel):
    ranker: Literal["none", "auto", "default-2024-11-15"] = "auto"
    score_threshold: float = Field(default=0.0, ge=0, le=1)
    hybrid_search: HybridSearch | None = None
    rank_fields: RankFields | None = None


class SearchRequest(WireModel):
    query: Query | Annotated[list[Query], Field(min_length=1, max_length=MAX_QUERIES)]
    filters: FilterParam | None = None
    max_num_results: int = Field(default=DEFAULT_RESULTS, ge=1, le=MAX_RESULTS)
    ranking_options: RankingOptions | None = None
    rewrite_query: bool = False
    search_mode: SearchMode = "hybrid"  # an agentloom extension

    def queries(self) -> list[str]:
        return [self.query] if isinstance(self.query, str) else list(self.query)


class SearchContent(WireModel):
    type: Literal["text"] = "text"
    text: str


class SearchResultItem(WireModel):
    file_id: str
    filename: str
    score: float
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    content: list[SearchContent]


class SearchResultsPage(WireModel):
    object: Literal["vector_store.search_results.page"] = "vector_store.search_results.page"
    search_query: list[str]
    data: list[SearchResultItem]
    has_more: bool = False
    next_page: Nullable[str] = None
