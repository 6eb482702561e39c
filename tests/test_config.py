"""load_settings: a TOML file, then environment overrides (which win), then defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentloom.config import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    EMBEDDING_PATTERNS,
    ConfigError,
    Settings,
    load_settings,
)
from agentloom.inference.base import ProviderConfig

FULL = """
[server]
host = "0.0.0.0"
port = 9000
max_body_bytes = 2048
heartbeat_interval = 2.5
abandoned_after = 30

[database]
url = "postgresql://agentloom@db:5432/agentloom"

[engine]
max_model_calls = 7
truncation_retries = 2

[[providers]]
name = "vllm"
base_url = "http://127.0.0.1:8000/v1"
api_key_env = "VLLM_API_KEY"
models = ["Qwen/Qwen3-8B", "Qwen/Qwen3-32B"]
timeout = 120

[[providers]]
name = "ollama"
base_url = "http://127.0.0.1:11434/v1"
api_key = "inline-key"

[[providers]]
name = "quiet"
base_url = "http://127.0.0.1:9999/v1"
discover = false
"""


def _write(tmp_path: Path, content: str, name: str = "agentloom.toml") -> Path:
    path = tmp_path / name
    path.write_text(content)
    return path


@pytest.fixture
def full(tmp_path: Path) -> Path:
    return _write(tmp_path, FULL)


def test_defaults_without_file_or_environment() -> None:
    settings = load_settings(env={})

    assert settings.server.host == DEFAULT_HOST
    assert settings.server.port == DEFAULT_PORT
    assert settings.database.url == "sqlite:///data/agentloom.db"
    assert settings.engine.max_model_calls == 10
    assert settings.providers == []
    assert settings.server.instance_id.startswith("inst_")
    assert load_settings(env={}).server.instance_id != settings.server.instance_id


def test_reads_every_section_of_the_file(full: Path) -> None:
    settings = load_settings(full, env={})

    assert settings.server.host == "0.0.0.0"
    assert settings.server.port == 9000
    assert settings.server.max_body_bytes == 2048
    assert settings.server.heartbeat_interval == 2.5
    assert settings.server.abandoned_after == 30.0
    assert settings.database.url == "postgresql://agentloom@db:5432/agentloom"
    assert settings.engine.max_model_calls == 7
    assert settings.engine.truncation_retries == 2
    assert [p.name for p in settings.providers] == ["vllm", "ollama", "quiet"]
    assert settings.providers[0].timeout == 120.0


def test_a_str_path_works_too(full: Path) -> None:
    assert load_settings(str(full), env={}).server.port == 9000


def test_environment_wins_over_the_file(full: Path) -> None:
    env = {
        "AGENTLOOM_HOST": "127.0.0.2",
        "AGENTLOOM_PORT": "9100",
        "AGENTLOOM_MAX_BODY_BYTES": "4096",
        "AGENTLOOM_DATABASE_URL": "sqlite:///elsewhere.db",
        "AGENTLOOM_MAX_MODEL_CALLS": "3",
    }

    settings = load_settings(full, env=env)

    assert settings.server.host == "127.0.0.2"
    assert settings.server.port == 9100
    assert settings.server.max_body_bytes == 4096
    assert settings.database.url == "sqlite:///elsewhere.db"
    assert settings.engine.max_model_calls == 3
    assert settings.server.heartbeat_interval == 2.5  # untouched keys keep the file's value
    assert settings.engine.truncation_retries == 2


def test_environment_alone_configures_a_server() -> None:
    settings = load_settings(env={"AGENTLOOM_PORT": "0", "AGENTLOOM_DATABASE_URL": "sqlite://"})

    assert settings.server.port == 0
    assert settings.database.url == "sqlite://"


def test_os_environ_is_the_default_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLOOM_PORT", "8765")

    assert load_settings().server.port == 8765


def test_providers_resolve_api_keys_and_model_lists(full: Path) -> None:
    settings = load_settings(full, env={})

    configs = settings.provider_configs({"VLLM_API_KEY": "from-env"})

    vllm, ollama, quiet = configs
    assert vllm == ProviderConfig(
        name="vllm",
        base_url="http://127.0.0.1:8000/v1",
        api_key="from-env",
        models=("Qwen/Qwen3-8B", "Qwen/Qwen3-32B"),
        discover=False,  # a static model list is not discovered
        timeout=120.0,
        embeddings=EMBEDDING_PATTERNS,
    )
    assert ollama.api_key == "inline-key"
    assert ollama.models == ()
    assert ollama.discover is True
    assert quiet.discover is False
    assert quiet.api_key is None


def test_api_key_env_that_is_not_set_gives_no_key(full: Path) -> None:
    vllm = load_settings(full, env={}).provider_configs({})[0]

    assert vllm.api_key is None


def test_an_inline_api_key_wins_over_api_key_env(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '[[providers]]\nname = "p"\napi_key = "inline"\napi_key_env = "P_KEY"\n',
    )

    config = load_settings(path, env={}).provider_configs({"P_KEY": "env"})[0]

    assert config.api_key == "inline"


def test_providers_choose_how_tokens_are_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path, '[[providers]]\nname = "a"\ntoken_count = "usage"\n[[providers]]\nname = "b"\n'
    )

    counted, default = load_settings(path, env={}).provider_configs({})

    assert counted.token_count == "usage"
    assert default.token_count == "auto"


def test_provider_configs_read_os_environ_by_default(
    full: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "from-os-environ")

    assert load_settings(full, env={}).provider_configs()[0].api_key == "from-os-environ"


def test_inference_environment_adds_a_first_provider(full: Path) -> None:
    env = {
        "AGENTLOOM_INFERENCE_BASE_URL": "http://gpu:8000/v1",
        "AGENTLOOM_INFERENCE_NAME": "gpu",
        "AGENTLOOM_INFERENCE_API_KEY": "secret",
        "AGENTLOOM_INFERENCE_MODELS": " m1 , m2,, ",
    }

    settings = load_settings(full, env=env)

    assert [p.name for p in settings.providers] == ["gpu", "vllm", "ollama", "quiet"]
    gpu = settings.provider_configs({})[0]
    assert gpu.base_url == "http://gpu:8000/v1"
    assert gpu.api_key == "secret"
    assert gpu.models == ("m1", "m2")
    assert gpu.discover is False


def test_inference_environment_defaults() -> None:
    settings = load_settings(env={"AGENTLOOM_INFERENCE_BASE_URL": "http://gpu:8000/v1"})

    (provider,) = settings.provider_configs({})
    assert provider.name == "default"
    assert provider.type == "openai_compatible"
    assert provider.api_key is None
    assert provider.models == ()
    assert provider.discover is True


def test_an_empty_inference_base_url_adds_nothing() -> None:
    assert load_settings(env={"AGENTLOOM_INFERENCE_BASE_URL": ""}).providers == []


def test_settings_are_frozen() -> None:
    settings = load_settings(env={})

    with pytest.raises(ValueError, match="frozen"):
        settings.server.port = 1  # type: ignore[misc]
    assert isinstance(settings, Settings)


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "[server\nport = 1\n")

    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_settings(path, env={})


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "nope.toml", env={})


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ("[server]\nprot = 1\n", "prot"),
        ("[databse]\nurl = 'sqlite://'\n", "databse"),
        ("[engine]\nmax_calls = 3\n", "max_calls"),
        ("[[providers]]\nname = 'p'\nbase = 'http://x'\n", "base"),
        ("verbose = true\n", "verbose"),
    ],
)
def test_unknown_keys_are_config_errors(tmp_path: Path, content: str, key: str) -> None:
    path = _write(tmp_path, content)

    with pytest.raises(ConfigError, match="invalid configuration") as caught:
        load_settings(path, env={})
    assert key in str(caught.value)


@pytest.mark.parametrize(
    "content",
    [
        "[server]\nport = 70000\n",
        "[server]\nport = 'eighty'\n",
        "[server]\nmax_body_bytes = 10\n",
        "[server]\nheartbeat_interval = 0\n",
        "[engine]\nmax_model_calls = 0\n",
        "[[providers]]\nname = ''\n",
        "[[providers]]\nname = 'has space'\n",
        "[[providers]]\nbase_url = 'http://x'\n",
        "[[providers]]\nname = 'p'\ntimeout = -1\n",
        "[[providers]]\nname = 'p'\nmodels = 'one'\n",
        "[[providers]]\nname = 'p'\ntoken_count = 'exact'\n",
    ],
)
def test_invalid_values_are_config_errors(tmp_path: Path, content: str) -> None:
    with pytest.raises(ConfigError, match="invalid configuration"):
        load_settings(_write(tmp_path, content), env={})


@pytest.mark.parametrize(
    "env",
    [
        {"AGENTLOOM_PORT": "not-a-port"},
        {"AGENTLOOM_PORT": "-1"},
        {"AGENTLOOM_MAX_MODEL_CALLS": "many"},
        {"AGENTLOOM_INFERENCE_BASE_URL": "http://x", "AGENTLOOM_INFERENCE_NAME": "a b"},
    ],
)
def test_invalid_environment_is_a_config_error(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="invalid configuration"):
        load_settings(env=env)


def test_an_override_of_a_section_that_is_not_a_table(tmp_path: Path) -> None:
    path = _write(tmp_path, "server = 1\n")

    with pytest.raises(ConfigError, match=r"\[server\] must be a table"):
        load_settings(path, env={"AGENTLOOM_PORT": "1"})


def test_an_inference_provider_with_providers_not_a_list(tmp_path: Path) -> None:
    path = _write(tmp_path, "providers = 'vllm'\n")

    with pytest.raises(ConfigError, match="providers must be an array of tables"):
        load_settings(path, env={"AGENTLOOM_INFERENCE_BASE_URL": "http://x"})


def test_the_environment_provider_replaces_a_file_provider_of_the_same_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agentloom.toml"
    path.write_text('[[providers]]\nname = "default"\nbase_url = "http://file:1/v1"\n')
    env = {"AGENTLOOM_INFERENCE_BASE_URL": "http://env:2/v1"}

    settings = load_settings(path, env=env)

    assert [(p.name, p.base_url) for p in settings.providers] == [("default", "http://env:2/v1")]


def test_repeated_provider_names_are_rejected(tmp_path: Path) -> None:
    path = tmp_path / "agentloom.toml"
    path.write_text('[[providers]]\nname = "a"\n\n[[providers]]\nname = "a"\n')

    with pytest.raises(ConfigError, match="repeated: a"):
        load_settings(path, env={})


def test_the_websocket_age_limit_comes_from_the_file_or_the_environment(tmp_path: Path) -> None:
    path = _write(tmp_path, "[server]\nwebsocket_max_age = 90\n")

    assert load_settings(env={}).server.websocket_max_age == 3600.0
    assert load_settings(path, env={}).server.websocket_max_age == 90.0
    env = {"AGENTLOOM_WEBSOCKET_MAX_AGE": "1.5"}
    assert load_settings(path, env=env).server.websocket_max_age == 1.5
    with pytest.raises(ConfigError):
        load_settings(env={"AGENTLOOM_WEBSOCKET_MAX_AGE": "0"})


def test_slow_client_limits_come_from_the_file_or_the_environment(tmp_path: Path) -> None:
    path = _write(tmp_path, "[server]\nheader_timeout = 2.5\nmax_connections = 50\n")

    default = load_settings(env={}).server
    assert (default.header_timeout, default.body_idle_timeout, default.body_timeout) == (
        10.0,
        30.0,
        600.0,
    )
    assert (default.keep_alive_timeout, default.max_connections) == (5.0, 1000)
    server = load_settings(path, env={}).server
    assert (server.header_timeout, server.max_connections) == (2.5, 50)
    env = {
        "AGENTLOOM_HEADER_TIMEOUT": "1",
        "AGENTLOOM_BODY_IDLE_TIMEOUT": "2",
        "AGENTLOOM_BODY_TIMEOUT": "3",
        "AGENTLOOM_KEEP_ALIVE_TIMEOUT": "4",
        "AGENTLOOM_MAX_CONNECTIONS": "5",
    }
    server = load_settings(path, env=env).server
    assert (server.header_timeout, server.body_idle_timeout, server.body_timeout) == (1, 2, 3)
    assert (server.keep_alive_timeout, server.max_connections) == (4, 5)
    for name in ("AGENTLOOM_HEADER_TIMEOUT", "AGENTLOOM_BODY_TIMEOUT", "AGENTLOOM_MAX_CONNECTIONS"):
        with pytest.raises(ConfigError):
            load_settings(env={name: "0"})


def test_files_settings_come_from_the_file_or_the_environment(tmp_path: Path) -> None:
    path = _write(tmp_path, '[files]\ndirectory = "/srv/blobs"\nmax_bytes = 1024\n')

    defaults = load_settings(env={}).files
    assert (defaults.directory, defaults.max_bytes) == (Path("data/files"), 512 * 1024 * 1024)
    assert load_settings(path, env={}).files.directory == Path("/srv/blobs")
    env = {"AGENTLOOM_FILES_DIRECTORY": "/tmp/f", "AGENTLOOM_FILES_MAX_BYTES": "2048"}
    overridden = load_settings(path, env=env).files
    assert (overridden.directory, overridden.max_bytes) == (Path("/tmp/f"), 2048)
    for bad in ("[files]\nmax_bytes = 0\n", '[files]\nblob_store = "s3"\n'):
        with pytest.raises(ConfigError):
            load_settings(_write(tmp_path, bad), env={})


JWT = """
[auth]
mode = "keys"

[auth.jwt]
issuer = "https://idp.example.com/"
audience = "agentloom"
"""


def test_bearer_jwts_are_configured_under_auth_jwt(tmp_path: Path) -> None:
    path = _write(tmp_path, JWT + 'jwks_url = "https://idp.example.com/jwks"\n')

    jwt = load_settings(path, env={}).auth.jwt

    assert jwt is not None
    assert (jwt.issuer, jwt.audience, jwt.jwks_url) == (
        "https://idp.example.com/",
        "agentloom",
        "https://idp.example.com/jwks",
    )
    assert (jwt.project_claim, jwt.algorithms) == ("agentloom_project", ["RS256", "ES256"])
    assert (jwt.leeway_seconds, jwt.jwks_cache_seconds, jwt.jwks_refetch_seconds) == (30, 300, 30)
    assert load_settings(env={}).auth.jwt is None
    on_file = load_settings(_write(tmp_path, JWT + 'jwks_file = "/etc/jwks.json"\n'), env={})
    assert on_file.auth.jwt is not None
    assert on_file.auth.jwt.jwks_file == Path("/etc/jwks.json")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("", "exactly one of jwks_file and jwks_url"),
        ('jwks_file = "/a"\njwks_url = "https://b/"\n', "exactly one of jwks_file and jwks_url"),
        ('jwks_url = "http://idp.example.com/jwks"\n', "must be an https URL"),
        ('jwks_url = "ftp://127.0.0.1/jwks"\n', "must be an https URL"),
        ('jwks_file = "/a"\nalgorithms = ["none"]\n', "algorithms.0"),
        ('jwks_file = "/a"\nalgorithms = ["HS256"]\n', "algorithms.0"),
        ('jwks_file = "/a"\nalgorithms = []\n', "algorithms"),
        ('jwks_file = "/a"\nleeway_seconds = -1\n', "leeway_seconds"),
        ('jwks_file = "/a"\njwks_cache_seconds = 0\n', "jwks_cache_seconds"),
        ('jwks_file = "/a"\nsecret = "x"\n', "secret"),
    ],
)
def test_a_wrong_auth_jwt_table_is_refused(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(_write(tmp_path, JWT + extra), env={})


def test_jwts_need_keys_mode_and_loopback_may_serve_http(tmp_path: Path) -> None:
    no_mode = JWT.replace('mode = "keys"\n', "") + 'jwks_file = "/a"\n'
    local = JWT + 'jwks_url = "http://127.0.0.1:8080/jwks"\n'

    with pytest.raises(ConfigError, match='needs \\[auth\\] mode = "keys"'):
        load_settings(_write(tmp_path, no_mode), env={})
    assert load_settings(_write(tmp_path, no_mode), env={"AGENTLOOM_AUTH": "keys"}).auth.jwt
    assert load_settings(_write(tmp_path, local), env={}).auth.jwt is not None


def test_default_access_rules_are_parsed_when_loaded_and_need_keys(tmp_path: Path) -> None:
    private = (
        '[auth]\nmode = "keys"\naccess_rules = [\n'
        '  { forbid = { actions = ["read", "update", "delete"] }, unless = "user is owner" },\n]\n'
    )
    bad = private.replace("user is owner", "user is the boss")

    rules = load_settings(_write(tmp_path, private), env={}).auth.default_rules()
    with pytest.raises(ConfigError, match="user is the boss") as refused:
        load_settings(_write(tmp_path, bad), env={})
    with pytest.raises(ConfigError, match='access_rules needs \\[auth\\] mode = "keys"'):
        load_settings(_write(tmp_path, private.replace('mode = "keys"\n', "")), env={})

    assert rules is not None
    assert rules.shown() == [
        {"forbid": {"actions": ["read", "update", "delete"]}, "unless": "user is owner"}
    ]
    assert "access rule 0" in str(refused.value)
    assert load_settings(env={}).auth.default_rules() is None
