"""Escape attempts against the real bubblewrap sandbox: each is contained and reported, and the
test process (standing in for the server) carries on. Short limits keep every test quick."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentloom.tools.sandbox import (
    BwrapSandbox,
    Limits,
    RunResult,
    SandboxUnavailableError,
    SubprocessSandbox,
    build_sandbox,
    default_packages,
)

pytestmark = pytest.mark.usefixtures("requires_sandbox")  # the real sandbox, in CI too

SYSTEM_PYTHON = "/usr/bin/python3"
SHORT = Limits(
    wall_seconds=10.0,
    cpu_seconds=5,
    memory_bytes=512 << 20,
    processes=32,
    file_bytes=1 << 20,
    output_bytes=64 << 10,
)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "container"
    path.mkdir()
    return path


async def _run(code: str, workdir: Path, limits: Limits = SHORT) -> RunResult:
    return await BwrapSandbox().run(code, workdir=workdir, limits=limits)


async def test_code_runs_and_its_files_are_listed(workdir: Path) -> None:
    result = await _run("open('out.txt', 'w').write('hi')\nprint(6 * 7)", workdir)
    assert result.ok, result
    assert result.stdout == "42\n"
    assert result.files == ("out.txt",)
    assert (workdir / "out.txt").read_text() == "hi"


async def test_no_network_not_even_the_hosts_loopback(workdir: Path) -> None:
    code = (
        "import socket\n"
        "try:\n    socket.create_connection(('127.0.0.1', 5432), timeout=3)\n"
        "except OSError as e:\n    print('refused', type(e).__name__)\n"
        "else:\n    print('connected')\n"
    )
    result = await _run(code, workdir)
    assert result.stdout.startswith("refused"), result


async def test_the_host_filesystem_is_not_there(workdir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "agentloom.db"
    secret.write_text("server database")
    code = (
        "import os\n"
        f"for p in ['/etc/passwd', {str(secret)!r}, {str(Path.cwd())!r}]:\n"
        "    print(p, os.path.exists(p))\n"
    )
    result = await _run(code, workdir)
    assert result.ok, result
    assert all(line.endswith("False") for line in result.stdout.splitlines()), result.stdout


async def test_writing_outside_the_workdir_fails(workdir: Path) -> None:
    code = (
        "import sys\n"
        "for p in ['/usr/evil', sys.prefix + '/evil', '/evil']:\n"
        "    try:\n        open(p, 'w')\n"
        "    except OSError as e:\n        print('denied', p, type(e).__name__)\n"
    )
    result = await _run(code, workdir)
    assert result.stdout.count("denied") == 3, result
    assert not result.files


async def test_a_fork_bomb_is_contained(workdir: Path) -> None:
    code = (
        "import os\n"
        "n = 0\n"
        "while True:\n"
        "    try:\n        pid = os.fork()\n"
        "    except OSError:\n        print('fork refused after', n, flush=True); break\n"
        "    if pid == 0:\n        import time; time.sleep(60); os._exit(0)\n"
        "    n += 1\n"
    )
    result = await _run(code, workdir)
    assert "fork refused after" in result.stdout, result
    assert int(result.stdout.split()[-1]) < SHORT.processes


async def test_allocating_10_gb_fails_with_a_memory_error(workdir: Path) -> None:
    result = await _run("x = bytearray(10 * 1024**3)", workdir)
    assert result.exit_code != 0
    assert "MemoryError" in result.stderr


async def test_printing_1_gb_is_cut_at_the_cap_and_killed(workdir: Path) -> None:
    result = await _run("import sys\nwhile True: sys.stdout.write('x' * 65536)", workdir)
    assert result.truncated
    assert len(result.stdout) + len(result.stderr) <= SHORT.output_bytes
    assert result.exit_code is not None
    assert result.exit_code < 0  # killed


async def test_running_forever_hits_the_wall_clock(workdir: Path) -> None:
    limits = Limits(wall_seconds=1.0, cpu_seconds=60)
    result = await _run("import time\nwhile True: time.sleep(1)", workdir, limits)
    assert result.timed_out
    assert not result.ok


async def test_burning_cpu_hits_the_cpu_limit(workdir: Path) -> None:
    limits = Limits(wall_seconds=20.0, cpu_seconds=1)
    result = await _run("while True: pass", workdir, limits)
    assert not result.timed_out
    assert result.exit_code is not None
    assert result.exit_code < 0  # SIGXCPU / SIGKILL


async def test_a_large_file_is_cut_at_the_file_size_limit(workdir: Path) -> None:
    code = "open('big', 'wb').write(b'x' * (2 << 20))"
    result = await _run(code, workdir)
    assert not result.ok
    assert (workdir / "big").stat().st_size <= SHORT.file_bytes


@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason="no system Python")
async def test_the_subprocess_fallback_applies_the_limits(workdir: Path) -> None:
    fallback = SubprocessSandbox(python=SYSTEM_PYTHON)  # the server's may sit under /root
    result = await fallback.run("x = bytearray(10 * 1024**3)", workdir=workdir, limits=SHORT)
    assert "MemoryError" in result.stderr
    ok = await fallback.run("import os; print(os.getcwd())", workdir=workdir, limits=SHORT)
    assert ok.stdout == f"{workdir}\n"


async def test_bwrap_runs_another_interpreter_too(workdir: Path) -> None:
    sandbox = BwrapSandbox(python=SYSTEM_PYTHON)
    result = await sandbox.run("import sys; print(sys.prefix)", workdir=workdir, limits=SHORT)
    assert result.stdout == "/usr\n", result


@pytest.fixture
def private_workdir(workdir: Path) -> Path:
    workdir.chmod(0o700)  # as tempfile.mkdtemp makes them
    return workdir


async def test_a_private_workdir_works(private_workdir: Path) -> None:
    workdir = private_workdir
    result = await _run("open('x', 'w').write('1'); print('ok')", workdir)
    assert result.stdout == "ok\n", result


def test_bwrap_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailableError, match="apt-get install -y bubblewrap"):
        build_sandbox("bwrap")
    assert isinstance(build_sandbox("subprocess"), SubprocessSandbox)  # the allowed fallback


async def test_numpy_imports_but_the_servers_files_stay_hidden(
    workdir: Path, tmp_path: Path
) -> None:
    packages = default_packages()
    assert packages, "the tests run from a venv: its site-packages is the default"
    config = tmp_path / "agentloom.toml"
    config.write_text('[database]\nurl = "sqlite:///secret.db"\n')
    database = tmp_path / "agentloom.db"
    database.write_text("server database")
    code = (
        "import os, sys, numpy\n"
        "print(numpy.arange(3).sum(), numpy.__file__.startswith('/opt/packages/'))\n"
        f"for p in [{str(config)!r}, {str(database)!r}, {str(Path.cwd())!r}, "
        f"{str(packages[0])!r}]:\n"
        "    print(p, os.path.exists(p))\n"
        "try:\n    import agentloom\nexcept ImportError:\n    print('no agentloom')\n"
        "try:\n    open(os.path.join(os.path.dirname(numpy.__file__), 'evil'), 'w')\n"
        "except OSError as e:\n    print('denied', type(e).__name__)\n"
    )
    sandbox = BwrapSandbox(packages=packages)
    result = await sandbox.run(code, workdir=workdir, limits=SHORT)
    assert result.ok, result
    lines = result.stdout.splitlines()
    assert lines[0] == "3 True"  # the venv's numpy, bound at a neutral place
    assert all(line.endswith(" False") for line in lines[1:5]), result.stdout
    assert lines[5:] == ["no agentloom", "denied OSError"]


async def test_a_configured_directory_is_importable_and_only_then(
    workdir: Path, tmp_path: Path
) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    (shelf / "shelved.py").write_text("ANSWER = 42\n")
    code = "try:\n    import shelved\nexcept ImportError:\n    print('missing')\nelse:\n"
    code += "    print(shelved.ANSWER, shelved.__file__)\n"
    with_shelf = await BwrapSandbox(packages=(shelf,)).run(code, workdir=workdir, limits=SHORT)
    assert with_shelf.stdout == "42 /opt/packages/0/shelved.py\n", with_shelf
    without = await BwrapSandbox().run(code, workdir=workdir, limits=SHORT)
    assert without.stdout == "missing\n", without


_SAME_PYTHON = f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.skipif(
    Path(SYSTEM_PYTHON).resolve().name != _SAME_PYTHON, reason="no system Python of this version"
)
async def test_the_subprocess_fallback_sees_the_packages_too(workdir: Path) -> None:
    fallback = SubprocessSandbox(python=SYSTEM_PYTHON, packages=default_packages())
    code = "import numpy; print(numpy.arange(3).sum())"
    result = await fallback.run(code, workdir=workdir, limits=SHORT)
    assert result.stdout == "3\n", result


def test_a_missing_package_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailableError, match="nowhere is not a directory"):
        build_sandbox("bwrap", packages=[tmp_path / "nowhere"])
