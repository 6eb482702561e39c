"""``agentloom models``: what the server serves (``/v1/models``), and the one ``ask`` / ``chat``
use when no model is named."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from agentloom.cli.output import json_option, print_json, table
from agentloom.cli.remote import Server, server_options

if TYPE_CHECKING:
    from openai.types import Model

__all__ = ["chat_models", "models", "server_model"]

HOW_TO_NAME = (
    "Pass --model, set AGENTLOOM_MODEL, or list models in the first [[providers]] entry of "
    "the --config file"
)


@click.command()
@json_option
@server_options
def models(as_json: bool, server: Server) -> None:
    """List the models the server serves: id, kind (chat or embeddings), owner."""
    with server.talking() as client:
        listed = list(client.models.list())
    if as_json:
        print_json(listed)
    else:
        table(("ID", "KIND", "OWNED BY"), ((m.id, _kind(m), m.owned_by) for m in listed))


def server_model(base_url: str, api_key: str | None) -> str:
    """The model ``ask`` / ``chat`` use when none is named: the server's only chat model."""
    import openai

    from agentloom.agents.connection import ConnectionSettingsError

    try:
        with Server(base_url, api_key).client() as client:
            served = chat_models(list(client.models.list()))
    except openai.APIConnectionError as exc:
        raise ConnectionSettingsError(
            f"no model given, and the server at {base_url} cannot be asked for its models "
            f"({exc.message}): {HOW_TO_NAME}"
        ) from exc
    if len(served) == 1:
        return served[0]
    named = f": {', '.join(served)}" if served else ""
    raise ConnectionSettingsError(
        f"no model given, and the server at {base_url} serves {len(served)} chat models"
        f"{named}. {HOW_TO_NAME}"
    )


def chat_models(listed: list[Model]) -> list[str]:
    """The chat models of a ``/v1/models`` list, each once: no ``provider/model`` twin of a
    model listed by its own name, no embedding model (agentloom says a model's ``kind``)."""
    names = {model.id for model in listed}
    return [model.id for model in listed if not _twin(model, names) and _kind(model) == "chat"]


def _twin(model: Model, names: set[str]) -> bool:
    provider, _, name = model.id.partition("/")
    return provider == model.owned_by and name in names


def _kind(model: Model) -> str:
    """``chat`` or ``embeddings``; a server that does not say (not agentloom's) serves chat."""
    kind = (model.model_extra or {}).get("kind")
    return kind if isinstance(kind, str) else "chat"
