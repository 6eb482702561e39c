"""The mount allowlist: what a sandboxed agent may be shown, checked on real paths (symlinks
and all) before any runner starts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentloom.agents.sandbox_policy import (
    AllowedRoot,
    CheckedMount,
    Mount,
    MountAllowlist,
    MountRefusedError,
    check_mounts,
)
from agentloom.errors import InvalidRequestError


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``allowed/`` (a project, a key, an .ssh folder, a link out), ``outside/``."""
    (tmp_path / "allowed" / "project").mkdir(parents=True)
    (tmp_path / "allowed" / "project" / "data.txt").write_text("1 2 3")
    (tmp_path / "allowed" / "project" / "server.pem").write_text("-----BEGIN")
    (tmp_path / "allowed" / ".ssh").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "allowed" / "escape").symlink_to(tmp_path / "outside")
    (tmp_path / "allowed" / "alias").symlink_to(tmp_path / "allowed" / "project")
    return tmp_path


def _allow(*roots: AllowedRoot) -> MountAllowlist:
    return MountAllowlist(roots=roots)


def test_a_path_under_an_allowed_root_is_mounted_at_its_real_path(tree: Path) -> None:
    allowlist = _allow(AllowedRoot(tree / "allowed"))
    checked = check_mounts([Mount(tree / "allowed" / "alias")], allowlist)
    assert checked == (CheckedMount((tree / "allowed" / "project").resolve()),)
    assert checked[0].target == str((tree / "allowed" / "project").resolve())


def test_a_file_may_be_mounted_and_a_writable_root_allows_writing(tree: Path) -> None:
    allowlist = _allow(AllowedRoot(tree / "allowed", writable=True))
    data = tree / "allowed" / "project" / "data.txt"
    assert check_mounts([Mount(data, writable=True)], allowlist)[0].writable


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("allowed/../outside", "may not contain '..'"),
        ("allowed/escape", "is not under an allowed root"),
        ("allowed/escape/", "is not under an allowed root"),
        ("outside", "is not under an allowed root"),
        ("allowed/missing", "does not exist"),
        ("allowed/.ssh", "matches the blocked name '.ssh'"),
        ("allowed/project/server.pem", "matches the blocked name '*.pem'"),
    ],
)
def test_refused_paths_say_why(tree: Path, given: str, why: str) -> None:
    allowlist = _allow(AllowedRoot(tree / "allowed"))
    with pytest.raises(MountRefusedError, match=re.escape(why)) as caught:
        check_mounts([Mount(f"{tree}/{given}")], allowlist)
    assert isinstance(caught.value, InvalidRequestError)  # a 400 at the server's edge
    assert caught.value.param == "mounts"
    assert given.split("/")[0] in caught.value.message  # names the path as given


def test_a_relative_path_is_refused(tree: Path) -> None:
    with pytest.raises(MountRefusedError, match="must be an absolute path"):
        check_mounts([Mount("allowed/project")], _allow(AllowedRoot(tree / "allowed")))


def test_no_roots_refuse_every_mount(tree: Path) -> None:
    with pytest.raises(MountRefusedError, match="the allowlist is empty"):
        check_mounts([Mount(tree / "allowed" / "project")], MountAllowlist())
    assert check_mounts([], MountAllowlist()) == ()


def test_writing_needs_a_writable_root(tree: Path) -> None:
    allowlist = _allow(AllowedRoot(tree / "allowed"))
    with pytest.raises(MountRefusedError, match="no allowed root containing it is writable"):
        check_mounts([Mount(tree / "allowed" / "project", writable=True)], allowlist)


def test_the_sandboxs_own_places_cannot_be_covered() -> None:
    allowlist = _allow(AllowedRoot("/"))
    for path in ("/", "/usr", "/usr/lib", "/etc", "/mnt"):
        with pytest.raises(MountRefusedError, match="would cover the sandbox's own"):
            check_mounts([Mount(path)], allowlist)


def test_blocked_names_can_be_replaced(tree: Path) -> None:
    allowlist = MountAllowlist((AllowedRoot(tree / "allowed"),), blocked=("data.*",))
    assert check_mounts([Mount(tree / "allowed" / "project" / "server.pem")], allowlist)
    refused = re.escape("'data.txt' matches the blocked name 'data.*'")
    with pytest.raises(MountRefusedError, match=refused):
        check_mounts([Mount(tree / "allowed" / "project" / "data.txt")], allowlist)
