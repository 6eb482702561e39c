"""Detectors of personal data and secrets: emails, phone numbers, payment cards (Luhn-checked),
IBANs (mod-97-checked), API keys and PEM private keys.

Each detector is a function of the text yielding :class:`Violation` s; messages name what was
found, never the value.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Final

from agentloom.safety.base import Violation

Detector = Callable[[str], Iterator[Violation]]

_EMAIL: Final = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?!\w)"
)
_PHONE: Final = re.compile(
    r"(?<![\w+])(?:"
    r"\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{2,5}){2,5}"  # +44 20 7946 0958, +1-555-...
    r"|(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}"  # (555) 123-4567, 555-123-4567
    r")(?![\w])"
)
_CARD: Final = re.compile(  # not the digits of an IBAN ("DE89 3704 ...")
    r"(?<![\d-])(?<![A-Z]{2}\d\d )[2-6]\d{3}(?:[ -]?\d){9,15}(?![\d])"
)
_IBAN: Final = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_PRIVATE_KEY: Final = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
_PEM_MAX_BODY: Final = 16 * 1024  # characters searched for the END line (an RSA-8192 key: ~6 k)
_API_KEYS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("an OpenAI-style API key", re.compile(r"\bsk-(?:[a-z]+-)?[A-Za-z0-9_-]{20,}")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("a Stripe key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}")),
)
_ASSIGNED_SECRET: Final = re.compile(
    r"(?i)\b(?:api[_-]?key|api[_-]?secret|secret[_-]?key|client[_-]?secret|access[_-]?token"
    r"|auth[_-]?token|secret|token|password|passwd)\b[\"']?\s*[:=]\s*[\"']?"
    r"([A-Za-z0-9_\-+/=.]{16,})"
)
_MIN_ENTROPY: Final = 3.5  # bits per character of a generic assigned secret


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """ISO 13616: the first four characters moved to the end, letters as 10..35, mod 97 is 1."""
    if not 15 <= len(iban) <= 34:
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def emails(text: str) -> Iterator[Violation]:
    for match in _EMAIL.finditer(text):
        yield Violation("pii.email", "an email address", span=match.span())


def phones(text: str) -> Iterator[Violation]:
    for match in _PHONE.finditer(text):
        digits = sum(char.isdigit() for char in match.group())
        if 10 <= digits <= 15:
            yield Violation("pii.phone", "a phone number", span=match.span())


def credit_cards(text: str) -> Iterator[Violation]:
    for match in _CARD.finditer(text):
        digits = re.sub(r"[ -]", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            yield Violation("pii.credit_card", "a payment card number", span=match.span())


def ibans(text: str) -> Iterator[Violation]:
    for match in _IBAN.finditer(text):
        if iban_valid(match.group().replace(" ", "")):
            yield Violation("pii.iban", "an IBAN", span=match.span())


def api_keys(text: str) -> Iterator[Violation]:
    for kind, pattern in _API_KEYS:
        for match in pattern.finditer(text):
            yield Violation("secret.api_key", kind, span=match.span())
    for match in _ASSIGNED_SECRET.finditer(text):
        if shannon_entropy(match.group(1)) >= _MIN_ENTROPY:
            yield Violation("secret.api_key", "a secret assigned to a key name", span=match.span())


def private_keys(text: str) -> Iterator[Violation]:
    """A BEGIN line is enough (a key cut short is still a leak); the span runs to its END line
    when there is one."""
    covered = 0
    for match in _PRIVATE_KEY.finditer(text):
        if match.start() < covered:
            continue
        end_line = f"-----END {match.group(1)}-----"
        end = text.find(end_line, match.end(), match.end() + _PEM_MAX_BODY + len(end_line))
        covered = match.end() if end < 0 else end + len(end_line)
        kind = f"a PEM {match.group(1).lower()}"
        yield Violation("secret.private_key", kind, span=(match.start(), covered))
