"""Uploaded files: what they are (sniffed from their bytes) and the text in them.

:func:`sniff_content_type` trusts the bytes, never a client's header: magic numbers first (PDF,
zip, images), then text, told apart by extension (CSV, Markdown, HTML) or content (JSON, HTML).
:func:`sniff_file` does the same for a file of any size in bounded memory: it reads the start,
and then only a zip's central directory or a long text's end.
:func:`extract_text` turns a supported type into plain text; both are synchronous and may be slow
on large files: callers run them in a thread.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import BinaryIO

from agentloom.retrieval.html import html_text

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ZIP = "application/zip"
JSON = "application/json"
HTML = "text/html"
CSV = "text/csv"
TSV = "text/tab-separated-values"
MARKDOWN = "text/markdown"
TEXT = "text/plain"
BINARY = "application/octet-stream"

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_TEXT_EXTENSIONS = {
    ".csv": CSV,
    ".tsv": TSV,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
}
_MAX_UNZIPPED = 512 * 1024 * 1024  # a DOCX that inflates past this is refused (zip bombs)
_MAX_CONTROL_RATIO = 0.01  # share of control characters above which "text" is binary
SNIFF_BYTES = 64 * 1024
"""How much of a file's start (and of a long text's end) :func:`sniff_file` reads."""
_MAX_ZIP_DIRECTORY = 1024 * 1024  # what sniffing may read of a zip to list its members


class FileParseError(Exception):
    """A file whose text cannot be extracted; ``message`` says why, for people."""

    code = "invalid_file"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnsupportedFileError(FileParseError):
    """A kind of file that has no text this server can extract (images, archives, binaries)."""

    code = "unsupported_file"


class InvalidFileError(FileParseError):
    """A file of a supported kind that is corrupt, encrypted or otherwise unreadable."""

    code = "invalid_file"


# --- sniffing --------------------------------------------------------------------------------


def sniff_content_type(data: bytes, filename: str) -> str:
    """The content type of ``data``, from its bytes (and, for text, the name's extension)."""
    return sniff_file(io.BytesIO(data), filename)


def sniff_file(file: BinaryIO, filename: str) -> str:
    """:func:`sniff_content_type` of a seekable file, reading only what it needs: the first
    :data:`SNIFF_BYTES`, then a zip's central directory or the last bytes of a long text."""
    size = file.seek(0, os.SEEK_END)
    file.seek(0)
    head = file.read(SNIFF_BYTES)
    if head.startswith(b"PK\x03\x04"):
        return DOCX if _is_docx(file, size) else ZIP
    kind = _magic_type(head)
    if kind is not None:
        return kind
    suffix = PurePosixPath(filename.lower()).suffix
    if size <= len(head):
        text = decode_text(head)
        return BINARY if text is None else _text_type(text, suffix)
    return _long_text_type(file, size, head, suffix)


def decode_text(data: bytes, *, final: bool = True) -> str | None:
    """``data`` as text (UTF-8, or UTF-16 with a byte order mark), or ``None`` if it is not.
    With ``final=False``, ``data`` is the start of a file and may end inside a character."""
    decoder = codecs.getincrementaldecoder(_encodings(data)[0])()
    try:
        text = decoder.decode(data, final=final)
    except UnicodeDecodeError:
        return None
    return text if _looks_like_text(text) else None


def _magic_type(head: bytes) -> str | None:
    if head[:1024].lstrip().startswith(b"%PDF-"):
        return PDF
    for magic, content_type in _MAGIC:
        if head.startswith(magic):
            return content_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _encodings(data: bytes) -> tuple[str, str]:
    """The codecs for a file's start (which holds any byte order mark) and for its end."""
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16", "utf-16-le"
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16", "utf-16-be"
    return "utf-8-sig", "utf-8"


def _long_text_type(file: BinaryIO, size: int, head: bytes, suffix: str) -> str:
    """The type of a file longer than :data:`SNIFF_BYTES`: text if its first and its last
    :data:`SNIFF_BYTES` are; JSON if it opens and closes like a JSON object or array (a long
    file is not parsed)."""
    text = decode_text(head, final=False)
    if text is None:
        return BINARY
    start = (size - SNIFF_BYTES) & ~1  # even: UTF-16 code units stay aligned
    file.seek(start)
    tail = _tail_text(file.read(size - start), _encodings(head)[1])
    if tail is None:
        return BINARY
    return _text_type(text, suffix, tail=tail)


def _tail_text(data: bytes, encoding: str) -> str | None:
    """The last bytes of a file as text. They may start inside a character (up to three bytes
    of UTF-8, or the low half of a UTF-16 surrogate pair): those bytes are skipped."""
    width = 2 if encoding.startswith("utf-16") else 1
    for skip in range(0, 4, width):
        try:
            text = data[skip:].decode(encoding)
        except UnicodeDecodeError as exc:
            if exc.start > 0:
                return None
            continue
        return text if _looks_like_text(text) else None
    return None


def _looks_like_text(text: str) -> bool:
    sample = text[:65536]
    if "\x00" in sample:
        return False
    control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f\v\x1b")
    return control <= len(sample) * _MAX_CONTROL_RATIO


def _text_type(text: str, suffix: str, *, tail: str | None = None) -> str:
    """The type of a text; ``tail`` is the end of a text that ``text`` only begins."""
    if suffix in _TEXT_EXTENSIONS:
        return _TEXT_EXTENSIONS[suffix]
    head = text[:512].lstrip().lower()
    if (suffix == ".json" or head[:1] in ("{", "[")) and _is_json(text, tail):
        return JSON
    if head.startswith(("<!doctype html", "<html")):
        return HTML
    return TEXT


def _is_json(text: str, tail: str | None) -> bool:
    """Whether ``text`` parses as JSON; if ``tail`` ends a longer text, whether the two open and
    close with matching brackets."""
    if tail is not None:
        return text.lstrip()[:1] + tail.rstrip()[-1:] in ("{}", "[]")
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _is_docx(file: BinaryIO, size: int) -> bool:
    """Whether the zip in ``file`` holds ``word/document.xml``; a zip whose central directory
    is larger than :data:`_MAX_ZIP_DIRECTORY` is not read (and is no DOCX)."""
    try:
        with zipfile.ZipFile(_ReadBudget(file, size, _MAX_ZIP_DIRECTORY)) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return False


class _ReadBudgetExceededError(OSError):
    """More was to be read from a file than its budget allows."""


class _ReadBudget:
    """A seekable file that refuses to read more than ``budget`` bytes in all (``zipfile``
    reads a central directory whole, however large the archive says it is)."""

    def __init__(self, file: BinaryIO, size: int, budget: int) -> None:
        self._file = file
        self._size = size
        self._left = budget

    def seek(self, offset: int, whence: int = os.SEEK_SET, /) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def read(self, n: int = -1, /) -> bytes:
        available = max(self._size - self._file.tell(), 0)
        self._left -= available if n < 0 else min(n, available)
        if self._left < 0:
            raise _ReadBudgetExceededError("read budget exceeded")
        return self._file.read(n)


# --- extraction ------------------------------------------------------------------------------


def extract_text(data: bytes, *, filename: str, content_type: str) -> str:
    """The text of a file of ``content_type`` (as :func:`sniff_content_type` tells it).

    Raises :class:`UnsupportedFileError` for types without text and :class:`InvalidFileError`
    for a corrupt or encrypted file.
    """
    extractor = _EXTRACTORS.get(content_type)
    if extractor is None:
        raise UnsupportedFileError(
            f"The file '{filename}' ({content_type}) has no text that can be extracted; "
            "supported: text, Markdown, HTML, JSON, CSV, PDF and DOCX files."
        )
    return extractor(data, filename)


def _plain(data: bytes, filename: str) -> str:
    text = decode_text(data)
    if text is None:
        raise InvalidFileError(f"The file '{filename}' is not valid UTF-8 text.")
    return text


def _html(data: bytes, filename: str) -> str:
    return html_text(_plain(data, filename))


def _json(data: bytes, filename: str) -> str:
    try:
        value = json.loads(_plain(data, filename))
    except (ValueError, RecursionError):
        raise InvalidFileError(f"The file '{filename}' is not valid JSON.") from None
    return json.dumps(value, indent=2, ensure_ascii=False)


def _table(delimiter: str) -> Callable[[bytes, str], str]:
    def rows(data: bytes, filename: str) -> str:
        reader = csv.reader(io.StringIO(_plain(data, filename), newline=""), delimiter=delimiter)
        try:
            return "\n".join(" | ".join(cell.strip() for cell in row) for row in reader if row)
        except csv.Error as exc:
            raise InvalidFileError(f"The file '{filename}' is not valid CSV: {exc}.") from None

    return rows


# pypdf raises many kinds of errors on damaged files (its own PyPdfError too): all of them mean
# "cannot be read". pypdf and python-docx are imported by the first file of their kind.
_PDF_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    AssertionError,
    RecursionError,
    OverflowError,
    zlib.error,
    struct.error,
)


def _pdf(data: bytes, filename: str) -> str:
    from pypdf.errors import PyPdfError

    unreadable: tuple[type[Exception], ...] = (PyPdfError, *_PDF_ERRORS)
    try:
        pages = list(_pdf_pages(data, filename))
    except unreadable as exc:
        raise InvalidFileError(f"The PDF '{filename}' could not be read: {exc}.") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise UnsupportedFileError(
            f"The PDF '{filename}' has no extractable text (it may be scanned images)."
        )
    return text


def _pdf_pages(data: bytes, filename: str) -> Iterator[str]:
    from pypdf import PasswordType, PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise InvalidFileError(f"The PDF '{filename}' is encrypted with a password.")
    for page in reader.pages:
        yield page.extract_text()


def _docx(data: bytes, filename: str) -> str:
    from docx.opc.exceptions import PackageNotFoundError

    _check_unzipped_size(data, filename)
    try:
        return "\n".join(_docx_blocks(data))
    except (PackageNotFoundError, SyntaxError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise InvalidFileError(f"The DOCX file '{filename}' could not be read: {exc}.") from None


def _docx_blocks(data: bytes) -> Iterator[str]:
    import docx
    from docx.text.paragraph import Paragraph

    document = docx.Document(io.BytesIO(data))
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            yield block.text
        else:
            for row in block.rows:
                yield " | ".join(cell.text.strip() for cell in row.cells)


def _check_unzipped_size(data: bytes, filename: str) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            size = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise InvalidFileError(
            f"The file '{filename}' is not a valid zip archive: {exc}."
        ) from None
    if size > _MAX_UNZIPPED:
        raise InvalidFileError(
            f"The file '{filename}' inflates to more than {_MAX_UNZIPPED} bytes."
        )


_EXTRACTORS: dict[str, Callable[[bytes, str], str]] = {
    TEXT: _plain,
    MARKDOWN: _plain,
    HTML: _html,
    JSON: _json,
    CSV: _table(","),
    TSV: _table("\t"),
    PDF: _pdf,
    DOCX: _docx,
}
