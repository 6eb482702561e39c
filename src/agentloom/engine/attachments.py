"""Files named by id in message parts (``input_file`` / ``input_image`` with ``file_id``),
resolved to what the model is shown: a file's extracted text, or an image as a data URL.

Chat messages are built synchronously (:mod:`agentloom.engine.messages`), so the files an item
names are resolved first, asynchronously, into a mapping by file id that goes along with the
items. A file named by the request's own input must exist and have text (else a 4xx naming the
part, e.g. ``input[0].content[1].file_id``); one named by an item accepted earlier (history) that
is gone since is shown as a short note instead.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from typing import Protocol, TypeAlias

from agentloom.api.content import InputFile, InputImage, InputText, MessageContent
from agentloom.api.files import FileObject
from agentloom.api.items import Message, StoredItem
from agentloom.errors import AgentloomError, InvalidRequestError, NotFoundError
from agentloom.frozen import frozen
from agentloom.retrieval.parsing import UnsupportedFileError

MAX_IMAGE_BYTES = 20 * 1024 * 1024  # the largest image given to a model as a data URL
UNSUPPORTED = UnsupportedFileError.code


@frozen
class FileContent:
    """A stored file's bytes, as a :class:`FileSource` gives them."""

    data: bytes
    content_type: str  # sniffed from the bytes when uploaded
    filename: str  # sanitised


@frozen
class FileText:
    filename: str
    text: str

    def shown(self, label: str | None = None) -> str:
        return f"[file: {label or self.filename}]\n{self.text}\n"


@frozen
class FileImage:
    filename: str
    url: str  # a data URL


Attachment: TypeAlias = FileText | FileImage
FilePartRef: TypeAlias = InputFile | InputImage


class FileSource(Protocol):
    """Where files come from (:class:`agentloom.services.files.FilesService`)."""

    async def text(self, file_id: str) -> tuple[FileObject, str]: ...

    async def content(self, file_id: str) -> FileContent: ...


def by_id(part: object) -> str | None:
    """The file id a part names, when the file is to be fetched by id (no inline data)."""
    if isinstance(part, InputFile) and part.file_data is None and part.file_url is None:
        return part.file_id
    if isinstance(part, InputImage) and part.image_url is None:
        return part.file_id
    return None


class Attachments:
    """Resolves file ids in items; with no ``files`` source every id is unknown."""

    def __init__(self, files: FileSource | None = None) -> None:
        self._files = files

    async def resolve(
        self, items: Sequence[StoredItem], *, param: str | None = None
    ) -> dict[str, Attachment]:
        """The files named by ``items``, by id. ``param`` (e.g. ``"input"``) marks the items as
        new: a missing or unreadable file is then an error naming ``param[i].content[j]``."""
        found: dict[str, Attachment] = {}
        for where, file_id, part in _named(items, param):
            known = found.get(file_id)
            if known is None or (isinstance(known, FileText) and isinstance(part, InputImage)):
                attachment = await self._attachment(file_id, part, where)
                if attachment is not None:
                    found[file_id] = attachment
        return found

    async def inline(self, message: Message, *, param: str) -> Message:
        """``message`` with its by-id parts replaced by their content (text or image URL)."""
        if not any(by_id(part) for part in message.content):
            return message
        content = [await self._inlined(part, param) for part in message.content]
        return message.model_copy(update={"content": content})

    async def _inlined(self, part: MessageContent, param: str) -> MessageContent:
        file_id = by_id(part)
        if file_id is None or not isinstance(part, InputFile | InputImage):
            return part
        attachment = await self._attachment(file_id, part, param)
        if isinstance(attachment, FileText):
            return InputText(text=f"\n{attachment.text}\n")
        assert attachment is not None
        detail = part.detail if isinstance(part, InputImage) else "auto"
        return InputImage(image_url=attachment.url, detail=detail)

    async def _attachment(
        self, file_id: str, part: FilePartRef, where: str | None
    ) -> Attachment | None:
        try:
            return await self._fetch(file_id, part)
        except (NotFoundError, InvalidRequestError) as exc:
            if where is None:
                return None  # an accepted item: rendered as "no longer available"
            raise _at(exc, where) from None

    async def _fetch(self, file_id: str, part: FilePartRef) -> Attachment:
        if self._files is None:
            raise NotFoundError(f"No such File object: {file_id}", param="file_id")
        if isinstance(part, InputFile):
            try:
                file, text = await self._files.text(file_id)
            except InvalidRequestError as exc:
                if exc.code != UNSUPPORTED:
                    raise
                return _image(await self._files.content(file_id), file_id, cause=exc)
            return FileText(filename=file.filename, text=text)
        return _image(await self._files.content(file_id), file_id)


def _named(
    items: Sequence[StoredItem], param: str | None
) -> Iterator[tuple[str | None, str, FilePartRef]]:
    for index, item in enumerate(items):
        if not isinstance(item, Message):
            continue
        for position, part in enumerate(item.content):
            file_id = by_id(part)
            if file_id is not None and isinstance(part, InputFile | InputImage):
                where = f"{param}[{index}].content[{position}].file_id" if param else None
                yield where, file_id, part


def _image(
    content: FileContent, file_id: str, *, cause: InvalidRequestError | None = None
) -> FileImage:
    """An image file as a data URL; an input_file without text (``cause``) that is not an
    image fails with that cause."""
    if not content.content_type.startswith("image/"):
        if cause is not None:
            raise cause
        raise InvalidRequestError(
            f"File '{file_id}' ({content.content_type}) is not an image: give it as "
            "input_file to show the model its text.",
            code="invalid_value",
        )
    if len(content.data) > MAX_IMAGE_BYTES:
        raise InvalidRequestError(
            f"Image file '{file_id}' is larger than {MAX_IMAGE_BYTES} bytes.",
            code="invalid_value",
        )
    encoded = base64.b64encode(content.data).decode("ascii")
    return FileImage(filename=content.filename, url=f"data:{content.content_type};base64,{encoded}")


def _at(exc: AgentloomError, where: str) -> AgentloomError:
    """``exc`` naming ``where`` as its param."""
    if isinstance(exc, NotFoundError):
        return NotFoundError(exc.message, param=where, code=exc.code)
    return InvalidRequestError(exc.message, param=where, code=exc.code)
