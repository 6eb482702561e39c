"""Real documents built in the test run (no binary fixtures): PDFs written by hand, object by
object with a correct cross-reference table, and DOCX files written with python-docx."""

from __future__ import annotations

import io
import zipfile

import docx
from pypdf import PdfReader, PdfWriter


def pdf_bytes(*pages: str) -> bytes:
    """A PDF with one page per string, each showing that text in Helvetica."""
    first_page = 4
    page_ids = [first_page + 2 * i for i in range(len(pages))]
    kids = " ".join(f"{number} 0 R" for number in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for number, text in zip(page_ids, pages, strict=True):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (number + 1)
        )
        objects.append(_stream(_text_operators(text)))
    return _document(objects)


def blank_pdf() -> bytes:
    """A one-page PDF without any text (like a scanned page without OCR)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ]
    return _document(objects)


def encrypted_pdf(text: str, *, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(text))))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(
    paragraphs: list[str], table: list[list[str]] | None = None, *, after: str | None = None
) -> bytes:
    """A DOCX with ``paragraphs``, then ``table`` (rows of cells), then the ``after`` paragraph."""
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for row, cells in zip(grid.rows, table, strict=True):
            for cell, value in zip(row.cells, cells, strict=True):
                cell.text = value
    if after is not None:
        document.add_paragraph(after)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def with_member(archive: bytes, name: str, data: bytes) -> bytes:
    """``archive`` (a zip) with member ``name`` replaced by ``data``."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    members = {info.filename: source.read(info) for info in source.infolist()}
    members[name] = data
    return zip_bytes(members)


def _text_operators(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1")


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _document(objects: list[bytes]) -> bytes:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
