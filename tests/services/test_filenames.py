"""Uploaded file names: only a readable last path component survives."""

from __future__ import annotations

import pytest

from agentloom.services.filenames import MAX_FILENAME_BYTES, sanitize_filename


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("report.pdf", "report.pdf"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        ("dir/", "file"),
        ("..", "file"),
        ("...hidden..txt", "hidden.txt"),
        ("", "file"),
        ("   ", "file"),
        ("tab\tand\nnewline.txt", "tabandnewline.txt"),
        ("zero\u200bwidth\u202eltr.txt", "zerowidthltr.txt"),
        ("C:evil.txt", "C_evil.txt"),
        ("many     spaces.md", "many spaces.md"),
        ("cafe\u0301.txt", "café.txt"),  # NFC
        ("日本語の資料.docx", "日本語の資料.docx"),
    ],
)
def test_sanitize_filename(raw: str, expected: str) -> None:
    assert sanitize_filename(raw) == expected


def test_long_names_are_cut_to_255_bytes_keeping_the_extension() -> None:
    name = sanitize_filename("語" * 200 + ".pdf")

    assert len(name.encode()) <= MAX_FILENAME_BYTES
    assert name.endswith(".pdf")
    assert name.startswith("語語")


def test_a_long_suffix_is_not_taken_for_an_extension() -> None:
    name = sanitize_filename("a." + "b" * 400)

    assert len(name.encode()) == MAX_FILENAME_BYTES
    assert name.startswith("a.bbb")
