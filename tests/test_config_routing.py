"""``[[models]]``: routed model ids, their deployments, fallbacks and cooldown, checked strictly
when the configuration is loaded."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentloom.config import ConfigError, load_settings
from agentloom.inference.router import Deployment, RouteConfig

PROVIDERS = """
[[providers]]
name = "a"
base_url = "http://127.0.0.1:8000/v1"
models = ["llama-3"]

[[providers]]
name = "b"
base_url = "http://127.0.0.1:8001/v1"
models = ["llama-3-replica", "small-chat"]
"""

ROUTED = """
[[models]]
id = "chat"
deployments = [
  { provider = "a", model = "llama-3" },
  { provider = "b", model = "llama-3-replica" },
]
fallbacks = ["backup", "b/small-chat"]
cooldown = 5

[[models]]
id = "backup"
deployments = [{ provider = "b", model = "small-chat" }]
"""


DOCS = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


def _load(tmp_path: Path, content: str) -> list[RouteConfig]:
    path = tmp_path / "agentloom.toml"
    path.write_text(content)
    return load_settings(path, env={}).route_configs()


def test_routed_models_are_read(tmp_path: Path) -> None:
    chat, backup = _load(tmp_path, PROVIDERS + ROUTED)

    assert chat == RouteConfig(
        "chat",
        (Deployment("a", "llama-3"), Deployment("b", "llama-3-replica")),
        fallbacks=("backup", "b/small-chat"),
        cooldown=5.0,
    )
    assert backup.fallbacks == ()
    assert backup.cooldown == 30.0


MODEL = '\n[[models]]\nid = "chat"\n'
WRONG: list[tuple[str, str, str]] = [
    (
        "unknown provider",
        MODEL + 'deployments = [{ provider = "nope", model = "m" }]',
        "model 'chat': no provider named 'nope'",
    ),
    ("no deployment", MODEL + "deployments = []", "model 'chat' needs at least one deployment"),
    ("deployments missing", MODEL, "deployments"),
    (
        "unknown fallback",
        MODEL + 'deployments = [{ provider = "a", model = "m" }]\nfallbacks = ["gpt-9"]',
        "model 'chat': its fallback 'gpt-9' is not served",
    ),
    (
        "itself as fallback",
        MODEL + 'deployments = [{ provider = "a", model = "m" }]\nfallbacks = ["chat"]',
        "model fallbacks form a cycle: chat -> chat",
    ),
    (
        "cycle",
        ROUTED.replace(
            'deployments = [{ provider = "b", model = "small-chat" }]',
            'deployments = [{ provider = "b", model = "small-chat" }]\nfallbacks = ["chat"]',
        ),
        "model fallbacks form a cycle: chat -> backup -> chat",
    ),
    ("repeated id", ROUTED + ROUTED, "[[models]] ids must be unique; repeated: backup, chat"),
    (
        "unknown key",
        MODEL + 'deployments = [{ provider = "a", model = "m", priority = 2 }]',
        "priority",
    ),
    (
        "weight not above zero",
        MODEL + 'deployments = [{ provider = "a", model = "m", weight = 0 }]',
        "weight",
    ),
    (
        "negative cooldown",
        MODEL + 'deployments = [{ provider = "a", model = "m" }]\ncooldown = -1',
        "cooldown",
    ),
]


@pytest.mark.parametrize(("extra", "message"), [w[1:] for w in WRONG], ids=[w[0] for w in WRONG])
def test_a_wrong_routed_model_is_a_config_error(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, PROVIDERS + extra)

    assert message in str(caught.value)


def test_a_fallback_may_be_a_model_a_provider_discovers(tmp_path: Path) -> None:
    discovering = '[[providers]]\nname = "vllm"\nbase_url = "http://127.0.0.1:8002/v1"\n'
    routed = MODEL + 'deployments = [{ provider = "a", model = "m" }]\nfallbacks = ["qwen"]'

    (chat,) = _load(tmp_path, PROVIDERS + discovering + routed)

    assert chat.fallbacks == ("qwen",)  # known once vllm answers; skipped if it never serves it


def test_the_documented_configuration_loads_with_its_routed_model(tmp_path: Path) -> None:
    found = re.search(r"```toml\n(.*?)```", DOCS.read_text(), re.DOTALL)
    assert found is not None

    (chat,) = _load(tmp_path, found.group(1))

    assert [d.provider for d in chat.deployments] == ["vllm", "vllm-2"]
    assert chat.fallbacks == ("gpt-4.1-mini",)
