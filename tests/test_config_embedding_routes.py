"""``[[models]]`` of ``kind = "embeddings"``: checked when the configuration is loaded (their
deployments are OpenAI-compatible endpoints, their routed fallbacks embeddings routes too)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentloom.config import ConfigError, Settings, load_settings
from agentloom.inference.router import Deployment, RouteConfig

PROVIDERS = """
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8000/v1"
models = ["llama-3"]

[[providers]]
name = "b"
base_url = "http://127.0.0.1:8001/v1"
models = ["bge-m3"]
"""

VECTORS = """
[[models]]
id = "vectors"
kind = "embeddings"
deployments = [{ provider = "a", model = "bge-m3" }, { provider = "b", model = "bge-m3" }]
fallbacks = ["all-MiniLM-L6-v2"]
"""

CHAT = """
[[models]]
id = "chat"
deployments = [{ provider = "a", model = "llama-3" }]
"""


def _load(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "agentloom.toml"
    path.write_text(text)
    return load_settings(path, env={})


def test_an_embeddings_route_is_read_with_its_kind(tmp_path: Path) -> None:
    settings = _load(tmp_path, PROVIDERS + VECTORS + CHAT)

    vectors = RouteConfig(
        id="vectors",
        deployments=(Deployment("a", "bge-m3"), Deployment("b", "bge-m3")),
        fallbacks=("all-MiniLM-L6-v2",),
        kind="embeddings",
    )
    assert settings.route_configs("embeddings") == [vectors]
    assert [config.id for config in settings.route_configs("chat")] == ["chat"]
    assert len(settings.route_configs()) == 2


def test_a_fallback_of_the_other_kind_is_refused(tmp_path: Path) -> None:
    mixed = CHAT.replace('"llama-3" }]', '"llama-3" }]\nfallbacks = ["vectors"]')

    with pytest.raises(ConfigError, match="'chat' is a chat route; its fallback 'vectors'"):
        _load(tmp_path, PROVIDERS + VECTORS + mixed)


def test_an_embeddings_deployment_needs_an_openai_compatible_base_url(tmp_path: Path) -> None:
    elsewhere = PROVIDERS.replace('name = "b"', 'name = "b"\ntype = "responses"')

    with pytest.raises(ConfigError, match="provider 'b' is not an openai_compatible provider"):
        _load(tmp_path, elsewhere + VECTORS)
