"""Reusable prompts: versioned templates (create, read, update, choose the default version,
delete), and a prompt rendered into a response request.

Rendering: text values (and ``input_text``'s text) replace their ``{{name}}``; an
``input_image`` / ``input_file`` value replaces it with a marker (``[image: name]``,
``[file: name]``) and the part itself reaches the model in a user message, placed before the
request's own input, that labels each part with its marker.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping

from pydantic import BaseModel

from agentloom.api.content import InputFile, InputImage, InputText, MessageContent
from agentloom.api.items import Message
from agentloom.api.lists import ListPage
from agentloom.api.prompts import (
    MAX_VERSION,
    CreatePromptRequest,
    DeletedPrompt,
    Prompt,
    PromptParam,
    PromptVariable,
    UpdatePromptRequest,
)
from agentloom.api.requests import CreateResponseRequest
from agentloom.engine.attachments import Attachments
from agentloom.errors import ConflictError, InvalidRequestError, NotFoundError
from agentloom.frozen import frozen
from agentloom.ids import new_id
from agentloom.services.templates import declared_variables, substitute
from agentloom.storage.base import Order
from agentloom.storage.prompts_base import PromptRow, PromptStore

_PROMPT_ID = re.compile(r"pmpt_[0-9a-f]{48}")


class _Fields(BaseModel):
    """A version's own fields, as stored in its row's body."""

    prompt: str
    variables: list[str]
    metadata: dict[str, str]


@frozen
class RenderedPrompt:
    version: int
    text: str  # the template with every variable substituted
    media: Message | None  # the image and file values, for the model


@frozen
class Applied:
    """A create request with its prompt applied, and the prompt's media message if any."""

    request: CreateResponseRequest
    media: Message | None


class PromptsService:
    def __init__(self, store: PromptStore, *, attachments: Attachments | None = None) -> None:
        self._store = store
        self._attachments = attachments or Attachments()

    async def create(self, request: CreatePromptRequest) -> Prompt:
        variables = declared_variables(request.prompt, request.variables)
        fields = _Fields(
            prompt=request.prompt, variables=variables, metadata=request.metadata or {}
        )
        row = _row(new_id("pmpt"), 1, fields, is_default=True)
        await self._store.create(row)
        return _prompt(row)

    async def get(self, prompt_id: str, version: int | None = None) -> Prompt:
        row = await self._find(prompt_id, version)
        if row is None:
            raise await self._missing(prompt_id, version)
        return _prompt(row)

    async def list(self, *, after: str | None, limit: int, order: Order) -> ListPage[Prompt]:
        page = None
        if after is None or _PROMPT_ID.fullmatch(after):
            page = await self._store.list_page(after=after, limit=limit, order=order)
        if page is None:
            raise NotFoundError(f"Prompt with id '{after}' not found.", param="after")
        return _list([_prompt(row) for row in page.data], has_more=page.has_more)

    async def versions(self, prompt_id: str) -> ListPage[Prompt]:
        rows = await self._store.versions(prompt_id) if _PROMPT_ID.fullmatch(prompt_id) else []
        if not rows:
            raise _not_found(prompt_id)
        return _list([_prompt(row) for row in rows], has_more=False)

    async def update(self, prompt_id: str, request: UpdatePromptRequest) -> Prompt:
        """A new version, from ``request.version``, which must be the latest one."""
        variables = declared_variables(request.prompt, request.variables)
        base = await self._find(prompt_id, request.version)
        if base is None:
            # Versions are only ever added: an existing prompt lacks only versions after its
            # latest one, which the caller cannot have seen.
            if await self._exists(prompt_id):
                raise _conflict(prompt_id, request.version)
            raise _not_found(prompt_id)
        metadata = request.metadata
        if metadata is None:
            metadata = _Fields.model_validate_json(base.body).metadata
        fields = _Fields(prompt=request.prompt, variables=variables, metadata=metadata)
        row = _row(prompt_id, request.version + 1, fields, is_default=request.set_as_default)
        outcome = await self._store.add_version(row, based_on=request.version)
        if outcome == "missing":
            raise _not_found(prompt_id)
        if outcome == "stale":
            raise _conflict(prompt_id, request.version)
        return _prompt(row)

    async def set_default(self, prompt_id: str, version: int) -> Prompt:
        row = None
        if _PROMPT_ID.fullmatch(prompt_id):
            row = await self._store.set_default(prompt_id, version)
        if row is None:
            raise await self._missing(prompt_id, version)
        return _prompt(row)

    async def delete(self, prompt_id: str) -> DeletedPrompt:
        if not (_PROMPT_ID.fullmatch(prompt_id) and await self._store.delete(prompt_id)):
            raise _not_found(prompt_id)
        return DeletedPrompt(id=prompt_id)

    # --- use in a response -------------------------------------------------------------------

    async def apply(self, request: CreateResponseRequest) -> Applied:
        """``request`` with its ``prompt`` rendered: the text leads ``instructions`` and
        ``prompt.version`` names the version used; the media message (image and file values)
        comes apart, for the model to see right after the instructions."""
        if request.prompt is None:
            return Applied(request, None)
        rendered = await self.render(request.prompt)
        media = rendered.media
        if media is not None:  # values given by file id: their text (or image) goes in
            media = await self._attachments.inline(media, param="prompt.variables")
        return Applied(with_prompt(request, rendered), media)

    async def render(self, param: PromptParam) -> RenderedPrompt:
        version = _requested_version(param.version)
        row = await self._find(param.id, version)
        if row is None:
            if version is not None and await self._exists(param.id):
                raise InvalidRequestError(
                    f"Prompt '{param.id}' has no version {version}.",
                    param="prompt.version",
                    code="invalid_value",
                )
            raise NotFoundError(f"Prompt with id '{param.id}' not found.", param="prompt.id")
        return render(_prompt(row), param.variables or {})

    # --- helpers -----------------------------------------------------------------------------

    async def _find(self, prompt_id: str, version: int | None) -> PromptRow | None:
        if not _PROMPT_ID.fullmatch(prompt_id):
            return None  # not an id this server gives: no query needed
        return await self._store.get(prompt_id, version)

    async def _exists(self, prompt_id: str) -> bool:
        return bool(_PROMPT_ID.fullmatch(prompt_id)) and await self._store.exists(prompt_id)

    async def _missing(self, prompt_id: str, version: int | None) -> NotFoundError:
        if version is None or not await self._exists(prompt_id):
            return _not_found(prompt_id)
        return NotFoundError(f"Prompt '{prompt_id}' has no version {version}.", param="version")


def render(prompt: Prompt, values: Mapping[str, PromptVariable]) -> RenderedPrompt:
    """``prompt`` with ``values`` (one for each of its variables, no others) substituted."""
    _check_values(prompt, values)
    texts = {name: _text(name, value) for name, value in values.items()}
    parts = [part for name in prompt.variables for part in _media(name, values[name])]
    return RenderedPrompt(
        version=prompt.version,
        text=substitute(prompt.prompt, texts),
        media=Message(role="user", content=parts) if parts else None,
    )


def with_prompt(request: CreateResponseRequest, rendered: RenderedPrompt) -> CreateResponseRequest:
    instructions = rendered.text
    if request.instructions:
        instructions = f"{rendered.text}\n\n{request.instructions}"
    update: dict[str, object] = {"instructions": instructions}
    if request.prompt is not None:
        update["prompt"] = request.prompt.model_copy(update={"version": str(rendered.version)})
    return request.model_copy(update=update)


def _check_values(prompt: Prompt, values: Mapping[str, PromptVariable]) -> None:
    missing = [name for name in prompt.variables if name not in values]
    if missing:
        raise InvalidRequestError(
            f"Missing value for the variable '{missing[0]}' of prompt '{prompt.id}' "
            f"(version {prompt.version}).",
            param="prompt.variables",
            code="missing_required_parameter",
        )
    declared = set(prompt.variables)
    unknown = [name for name in values if name not in declared]
    if unknown:
        raise InvalidRequestError(
            f"'{unknown[0]}' is not a variable of prompt '{prompt.id}' (version "
            f"{prompt.version}); its variables are: {', '.join(prompt.variables) or 'none'}.",
            param="prompt.variables",
            code="invalid_value",
        )


def _text(name: str, value: PromptVariable) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, InputText):
        return value.text
    return _marker(name, value)


def _marker(name: str, value: InputImage | InputFile) -> str:
    return f"[image: {name}]" if isinstance(value, InputImage) else f"[file: {name}]"


def _media(name: str, value: PromptVariable) -> list[MessageContent]:
    if isinstance(value, InputImage) and value.image_url is None and value.file_id is None:
        raise _unusable(name, "an input_image needs image_url or file_id")
    if isinstance(value, InputFile) and not (value.file_data or value.file_url or value.file_id):
        raise _unusable(name, "an input_file needs file_data, file_url or file_id")
    if isinstance(value, InputImage | InputFile):
        return [InputText(text=_marker(name, value)), value]
    return []


def _unusable(name: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"Invalid value for the prompt variable '{name}': {why}.",
        param="prompt.variables",
        code="invalid_value",
    )


def _requested_version(version: str | int | None) -> int | None:
    if version is None:
        return None
    number = version if isinstance(version, int) else _digits(version)
    if number is None or not 1 <= number <= MAX_VERSION:
        raise InvalidRequestError(
            f"Invalid prompt version '{version}': a version is a positive integer.",
            param="prompt.version",
            code="invalid_value",
        )
    return number


def _digits(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else None


def _row(prompt_id: str, version: int, fields: _Fields, *, is_default: bool) -> PromptRow:
    body = fields.model_dump_json()
    return PromptRow(prompt_id, version, time.time(), is_default, body)


def _prompt(row: PromptRow) -> Prompt:
    fields = _Fields.model_validate_json(row.body)
    return Prompt(
        id=row.id,
        version=row.version,
        prompt=fields.prompt,
        variables=fields.variables,
        is_default=row.is_default,
        created_at=int(row.created_at),
        metadata=fields.metadata,
    )


def _list(prompts: list[Prompt], *, has_more: bool) -> ListPage[Prompt]:
    return ListPage[Prompt](
        data=prompts,
        first_id=prompts[0].id if prompts else None,
        last_id=prompts[-1].id if prompts else None,
        has_more=has_more,
    )


def _not_found(prompt_id: str) -> NotFoundError:
    return NotFoundError(f"Prompt with id '{prompt_id}' not found.", param="prompt_id")


def _conflict(prompt_id: str, version: int) -> ConflictError:
    return ConflictError(
        f"Version {version} is not the latest version of prompt '{prompt_id}': it was updated "
        "since. Read its latest version and apply your change to it.",
        param="version",
        code="prompt_version_conflict",
    )
