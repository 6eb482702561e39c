"""Uploaded files: what they are (sniffed from their bytes) and the text in them.

:func:`sniff_content_type` trusts the bytes, never a client's header: magic numbers first (PDF,
zip, images), then text, told apart by extension (CSV, Markdown, HTML) or content (JSON, HTML).
:func:`extract_text` turns a supported type into plain text; both are synchronous and may be slow
on large files: callers run them in a thread.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.text.paragraph import Paragraph
from pypdf import PasswordType, PdfReader
from pypdf.errors import PyPdfError

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
    if data[:1024].lstrip().startswith(b"%PDF-"):
        return PDF
    if data.startswith(b"PK\x03\x04"):
        return DOCX if _is_docx(data) else ZIP
    for magic, content_type in _MAGIC:
        if data.startswith(magic):
            return content_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    text = decode_text(data)
    if text is None:
        return BINARY
    return _text_type(text, PurePosixPath(filename.lower()).suffix)


def decode_text(data: bytes) -> str | None:
    """``data`` as text (UTF-8, or UTF-16 with a byte order mark), or ``None`` if it is not."""
    try:
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            text = data.decode("utf-16")
        else:
            text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return text if _looks_like_text(text) else None


def _looks_like_text(text: str) -> bool:
    sample = text[:65536]
    if "\x00" in sample:
        return False
    control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f\v\x1b")
    return control <= len(sample) * _MAX_CONTROL_RATIO


def _text_type(text: str, suffix: str) -> str:
    if suffix in _TEXT_EXTENSIONS:
        return _TEXT_EXTENSIONS[suffix]
    head = text[:512].lstrip().lower()
    if (suffix == ".json" or head[:1] in ("{", "[")) and _is_json(text):
        return JSON
    if head.startswith(("<!doctype html", "<html")):
        return HTML
    return TEXT


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _is_docx(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return False


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


# pypdf raises many kinds of errors on damaged files; all of them mean "cannot be read".
_PDF_ERRORS: tuple[type[Exception], ...] = (
    PyPdfError,
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
    try:
        pages = list(_pdf_pages(data, filename))
    except _PDF_ERRORS as exc:
        raise InvalidFileError(f"The PDF '{filename}' could not be read: {exc}.") from None
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise UnsupportedFileError(
            f"The PDF '{filename}' has no extractable text (it may be scanned images)."
        )
    return text


def _pdf_pages(data: bytes, filename: str) -> Iterator[str]:
    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
        raise InvalidFileError(f"The PDF '{filename}' is encrypted with a password.")
    for page in reader.pages:
        yield page.extract_text()


def _docx(data: bytes, filename: str) -> str:
    _check_unzipped_size(data, filename)
    try:
        return "\n".join(_docx_blocks(data))
    except (PackageNotFoundError, SyntaxError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise InvalidFileError(f"The DOCX file '{filename}' could not be read: {exc}.") from None


def _docx_blocks(data: bytes) -> Iterator[str]:
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
