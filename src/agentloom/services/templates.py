"""Prompt templates: ``{{name}}`` placeholders (spaces allowed inside the braces), the variables a
template declares, and substitution.

A name is an identifier: a letter or an underscore, then letters, digits and underscores. Braces
around anything else (``{{ 1st }}``, ``{{a-b}}``) are plain text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agentloom.errors import InvalidRequestError

_NAME = r"[^\W\d]\w*"
PLACEHOLDER = re.compile(r"\{\{\s*(" + _NAME + r")\s*\}\}")
_IS_NAME = re.compile(_NAME)


def placeholders(template: str) -> list[str]:
    """The distinct names ``template`` uses, in order of first use."""
    return list(dict.fromkeys(match.group(1) for match in PLACEHOLDER.finditer(template)))


def declared_variables(template: str, variables: Sequence[str] | None) -> list[str]:
    """The variables of a template: ``variables`` as given (identifiers, no repeats, covering
    every placeholder), or the placeholders themselves when ``variables`` is omitted."""
    used = placeholders(template)
    if variables is None:
        return used
    seen: set[str] = set()
    for name in variables:
        _check_name(name, seen)
        seen.add(name)
    undeclared = [name for name in used if name not in seen]
    if undeclared:
        raise InvalidRequestError(
            f"The prompt uses the variable '{undeclared[0]}', which 'variables' does not "
            "declare. Declare every {{name}} of the prompt, or omit 'variables'.",
            param="variables",
            code="invalid_value",
        )
    return list(variables)


def _check_name(name: str, seen: set[str]) -> None:
    if not _IS_NAME.fullmatch(name):
        raise InvalidRequestError(
            f"Invalid variable name '{name}': a name is a letter or an underscore followed by "
            "letters, digits and underscores.",
            param="variables",
            code="invalid_value",
        )
    if name in seen:
        raise InvalidRequestError(
            f"The variable '{name}' is declared more than once.",
            param="variables",
            code="invalid_value",
        )


def substitute(template: str, values: Mapping[str, str]) -> str:
    """``template`` with each placeholder replaced by its value, in one pass: a value is never
    itself searched for placeholders. A placeholder without a value is left as it is."""
    return PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)
