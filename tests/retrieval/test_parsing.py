"""File types sniffed from bytes, text extracted from each supported format, and clear errors
for files that have no text or cannot be read. Documents are built by the tests themselves."""

from __future__ import annotations

import codecs
import io
import json
import random
import zipfile

import pytest

from agentloom.retrieval import parsing
from agentloom.retrieval.parsing import (
    FileParseError,
    InvalidFileError,
    UnsupportedFileError,
    extract_text,
    sniff_content_type,
    sniff_file,
)
from tests.retrieval.documents import (
    blank_pdf,
    docx_bytes,
    encrypted_pdf,
    pdf_bytes,
    with_member,
    zip_bytes,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
GARBAGE = bytes(range(256)) * 4


def text_of(data: bytes, filename: str) -> str:
    return extract_text(data, filename=filename, content_type=sniff_content_type(data, filename))


# --- sniffing --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "filename", "expected"),
    [
        (pdf_bytes("x"), "notes.txt", parsing.PDF),  # the bytes win over the name
        (docx_bytes(["x"]), "report.bin", parsing.DOCX),
        (zip_bytes({"a.txt": b"x"}), "report.docx", parsing.ZIP),
        (PNG, "photo.pdf", "image/png"),
        (b"\xff\xd8\xff\xe0" + b"\x00" * 16, "x", "image/jpeg"),
        (b"GIF89a" + b"\x00" * 16, "x", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "x", "image/webp"),
        (b"plain words", "notes", parsing.TEXT),
        (b"plain words", "notes.pdf", parsing.TEXT),  # a name does not make a PDF
        (b'{"a": [1, 2]}', "data", parsing.JSON),
        (b"[1, 2", "data.json", parsing.TEXT),  # not valid JSON
        (b"a,b\n1,2\n", "table.csv", parsing.CSV),
        (b"a\tb\n1\t2\n", "table.tsv", parsing.TSV),
        (b"# Title\n", "readme.md", parsing.MARKDOWN),
        (b"<p>hi</p>", "page.html", parsing.HTML),
        (b"  <!DOCTYPE html><html><body>hi</body></html>", "page", parsing.HTML),
        (codecs.BOM_UTF16_LE + "hello".encode("utf-16-le"), "x.txt", parsing.TEXT),
        (GARBAGE, "x.txt", parsing.BINARY),
        (b"\xc3\x28 invalid utf-8", "x.txt", parsing.BINARY),
        (b"text with a \x00 nul", "x.txt", parsing.BINARY),
    ],
)
def test_sniff_content_type(data: bytes, filename: str, expected: str) -> None:
    assert sniff_content_type(data, filename) == expected


# --- sniffing a long file: only its start, a zip's directory or a text's end are read ---------

MIB = 1024 * 1024
SNIFF = parsing.SNIFF_BYTES
NOISE = random.Random(7).randbytes(MIB)  # incompressible: a zip of it stays large


class CountingFile(io.BytesIO):
    """A file that counts the bytes read from it."""

    bytes_read = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.bytes_read += len(data)
        return data


def sniff_counted(data: bytes, filename: str) -> tuple[str, int]:
    file = CountingFile(data)
    return sniff_file(file, filename), file.bytes_read


def crowded_zip() -> bytes:
    """A DOCX-like zip whose central directory (over 1 MiB) lists thousands of members."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("word/document.xml", b"<w:document/>")
        for i in range(8000):
            archive.writestr(f"word/media/{i:06d}-{'x' * 120}.bin", b"")
    return out.getvalue()


EMOJI = "\U0001f600"  # a surrogate pair in UTF-16
LONG_FILES = [
    (with_member(docx_bytes(["hi"]), "word/media/noise.bin", NOISE), "r.bin", parsing.DOCX),
    (zip_bytes({"noise.bin": NOISE}), "r.docx", parsing.ZIP),
    (crowded_zip(), "r.docx", parsing.ZIP),  # too large a directory to read: not a DOCX
    (b"%PDF-1.7\n" + NOISE, "r.txt", parsing.PDF),
    (PNG + NOISE, "r.txt", "image/png"),
    (NOISE, "r.txt", parsing.BINARY),
    (b"words " * (MIB // 6 + 1), "notes", parsing.TEXT),
    (b"a" * (SNIFF - 1) + "é".encode() * MIB, "x", parsing.TEXT),  # a character on each cut
    (b"words " * (MIB // 6 + 1) + GARBAGE, "x.txt", parsing.BINARY),  # text that ends in binary
    (b"words " * (MIB // 6 + 1) + b"\xff", "x.txt", parsing.BINARY),  # invalid UTF-8 at the end
    (b'{"rows": [' + b"1, " * (MIB // 3) + b"1]}\n", "data", parsing.JSON),
    (b"[" + b"1, " * (MIB // 3), "data.json", parsing.TEXT),  # never closed: not JSON
    (b"a,b\n" + b"1,2\n" * (MIB // 4), "t.csv", parsing.CSV),
    (b"<!DOCTYPE html><html><body>" + b"<p>hi</p>" * (MIB // 9), "page", parsing.HTML),
    (codecs.BOM_UTF16_LE + (EMOJI * (MIB // 4) + "a").encode("utf-16-le"), "w", parsing.TEXT),
    (codecs.BOM_UTF16_BE + ("{" + EMOJI * (MIB // 4) + "}").encode("utf-16-be"), "w", parsing.JSON),
]


@pytest.mark.parametrize(("data", "filename", "expected"), LONG_FILES)
def test_a_long_file_is_sniffed_from_a_few_of_its_bytes(
    data: bytes, filename: str, expected: str
) -> None:
    kind, bytes_read = sniff_counted(data, filename)

    assert len(data) >= MIB
    assert kind == expected
    assert bytes_read <= 3 * SNIFF  # start, then a zip's directory or a text's end


def test_a_short_file_is_read_whole_and_sniffed_as_before() -> None:
    data = b'{"a": [1, 2]}'

    assert sniff_counted(data, "data") == (parsing.JSON, len(data))
    assert sniff_counted(b"[1, 2", "data.json") == (parsing.TEXT, 5)


# --- extraction ------------------------------------------------------------------------------


def test_plain_text_and_markdown_are_kept_as_they_are() -> None:
    assert text_of("héllo\nwörld\n".encode(), "a.txt") == "héllo\nwörld\n"
    assert text_of(b"\xef\xbb\xbf# Title\n\n- item\n", "a.md") == "# Title\n\n- item\n"
    assert text_of(codecs.BOM_UTF16_BE + "wide".encode("utf-16-be"), "w.txt") == "wide"


def test_html_keeps_visible_text_with_block_breaks() -> None:
    page = b"""<!doctype html><html><head><title>Hidden title</title>
    <style>p { color: red }</style><script>var secret = 1;</script></head>
    <body><h1>Heading</h1><p>First   paragraph with <b>bold</b> text.</p>
    <p>Second<br>line</p><noscript>no js</noscript>
    <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
    <pre>  keep   spacing</pre><p>Caf&eacute; &amp; more</p></body></html>"""

    text = text_of(page, "page.html")

    assert "\n\n\n" not in text
    assert [line for line in text.splitlines() if line] == [
        "Heading",
        "First paragraph with bold text.",
        "Second",
        "line",
        "k | v",
        "a | 1",
        "keep   spacing",
        "Café & more",
    ]
    for hidden in ("Hidden title", "color", "secret", "no js"):
        assert hidden not in text


def test_html_with_an_unclosed_head_keeps_the_body() -> None:
    assert text_of(b"<html><head><title>t</title><body><p>Body text</p>", "p.htm") == "Body text"


def test_json_is_pretty_printed() -> None:
    text = text_of(b'{"name":"Ann","tags":["a","b"],"city":"K\\u00f6ln"}', "data.json")

    assert json.loads(text) == {"name": "Ann", "tags": ["a", "b"], "city": "Köln"}
    assert '  "name": "Ann",' in text.splitlines()
    assert "Köln" in text


def test_csv_and_tsv_become_rows() -> None:
    assert text_of(b'name,city\nAnn,"Paris, FR"\n\nBob,Rome\n', "t.csv") == (
        "name | city\nAnn | Paris, FR\nBob | Rome"
    )
    assert text_of(b"a\tb\n1\t2\n", "t.tsv") == "a | b\n1 | 2"


def test_pdf_text_of_every_page() -> None:
    data = pdf_bytes("The first page (one).", "The second page.")

    assert text_of(data, "doc.pdf") == "The first page (one).\n\nThe second page."


def test_pdf_with_an_empty_user_password_is_read() -> None:
    assert text_of(encrypted_pdf("Open to all", user_password=""), "doc.pdf") == "Open to all"


def test_docx_paragraphs_and_tables_in_document_order() -> None:
    data = docx_bytes(
        ["Quarterly report", "Revenue grew."], [["region", "sales"], ["north", "10"]], after="End."
    )

    assert text_of(data, "report.docx").splitlines() == [
        "Quarterly report",
        "Revenue grew.",
        "region | sales",
        "north | 10",
        "End.",
    ]


# --- files without text, broken files ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "filename", "error", "phrase"),
    [
        (encrypted_pdf("secret", user_password="pw"), "locked.pdf", InvalidFileError, "encrypted"),
        (b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", "broken.pdf", InvalidFileError, "could not"),
        (pdf_bytes("x")[:60], "cut.pdf", InvalidFileError, "could not be read"),
        (blank_pdf(), "scan.pdf", UnsupportedFileError, "no extractable text"),
        (zip_bytes({"a.txt": b"x"}), "a.zip", UnsupportedFileError, "application/zip"),
        (PNG, "photo.png", UnsupportedFileError, "image/png"),
        (GARBAGE, "blob.bin", UnsupportedFileError, "application/octet-stream"),
        (
            with_member(docx_bytes(["x"]), "word/document.xml", b"<w:document"),
            "bad.docx",
            InvalidFileError,
            "could not be read",
        ),
    ],
)
def test_unreadable_files_raise_a_readable_error(
    data: bytes, filename: str, error: type[FileParseError], phrase: str
) -> None:
    with pytest.raises(error) as raised:
        text_of(data, filename)

    assert phrase in raised.value.message
    assert filename in raised.value.message
    assert raised.value.code == (
        "invalid_file" if error is InvalidFileError else "unsupported_file"
    )


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (b"{not json", parsing.JSON),
        (b"\xff\xfe\xfd", parsing.TEXT),
        (b"plain text, not a pdf", parsing.PDF),
        (b"PK\x03\x04 not really a zip", parsing.DOCX),
    ],
)
def test_a_type_that_does_not_match_the_bytes_is_an_invalid_file(
    data: bytes, content_type: str
) -> None:
    with pytest.raises(InvalidFileError):
        extract_text(data, filename="f", content_type=content_type)


def test_a_docx_that_inflates_too_far_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parsing, "_MAX_UNZIPPED", 1000)

    with pytest.raises(InvalidFileError, match="inflates"):
        text_of(docx_bytes(["x" * 5000]), "big.docx")
