"""The installation check (``agentloom_server.ownership``) on real directories laid out as pip
leaves them: this distribution, the unrelated PyPI ``agentloom`` installed before or after it,
removed, an editable install, and a copy earlier on the path."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import agentloom_server
from agentloom_server.ownership import problems
from tests.deploy.distributions import RIVAL_FILES, RIVAL_SUMMARY, install

OURS = {
    "agentloom/__init__.py": '__version__ = "0.1.0"\n',
    "agentloom/cli/__init__.py": "",
    "agentloom/cli/main.py": "def main() -> None: ...\n",
    "agentloom_server/__init__.py": "",
}


def ours(site: Path) -> None:
    install(site, "agentloom-server", "0.1.0", OURS)


def rival(site: Path) -> None:
    install(site, "agentloom", "0.4.0", RIVAL_FILES, RIVAL_SUMMARY)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site-packages"
    folder.mkdir()
    return folder


def test_our_package_alone_is_ours(site: Path) -> None:
    ours(site)

    assert problems([str(site)]) == []


def test_the_rival_installed_after_us_claims_the_package_and_wrote_over_our_files(
    site: Path,
) -> None:
    ours(site)
    rival(site)

    claimed, altered = problems([str(site)])

    assert claimed.startswith(f"the distribution agentloom 0.4.0 ({RIVAL_SUMMARY})")
    assert "pipx install agentloom-server" in claimed
    assert altered.startswith("3 files that agentloom-server 0.1.0 installed are missing or were")
    assert "(agentloom/__init__.py, agentloom/cli/__init__.py, agentloom/cli/main.py)" in altered
    assert "pip install --force-reinstall --no-deps agentloom-server" in altered


def test_the_rival_installed_before_us_still_shares_the_package(site: Path) -> None:
    rival(site)
    ours(site)  # our files win: theirs are broken, and removing them would delete ours

    (claimed,) = problems([str(site)])

    assert "cannot share one environment" in claimed
    assert "`pip uninstall agentloom`" in claimed


def test_removing_the_rival_deletes_the_files_we_shared(site: Path) -> None:
    rival(site)
    ours(site)
    shutil.rmtree(site / "agentloom-0.4.0.dist-info")  # as `pip uninstall agentloom` does
    for path in RIVAL_FILES:
        (site / path).unlink()

    (altered,) = problems([str(site)])

    assert altered.startswith("3 files that agentloom-server 0.1.0 installed are missing")


def test_an_editable_install_lists_no_package_files(site: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    install(checkout, "unused", "0", {"agentloom/__init__.py": ""})
    install(site, "agentloom", "0.1.0", {"_agentloom.pth": f"{checkout}\n"})  # our old name

    assert problems([str(site), str(checkout)]) == []


def test_a_copy_earlier_on_the_path_shadows_ours(site: Path, tmp_path: Path) -> None:
    ours(site)
    elsewhere = tmp_path / "work"
    (elsewhere / "agentloom").mkdir(parents=True)
    (elsewhere / "agentloom" / "__init__.py").write_text("")

    (shadowed,) = problems([str(elsewhere), str(site)])

    assert shadowed.startswith(f"Python imports `agentloom` from {elsewhere / 'agentloom'}")
    assert f"not from {site / 'agentloom' / '__init__.py'}" in shadowed


def test_the_commands_refuse_to_start_with_status_2(
    site: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ours(site)
    rival(site)
    monkeypatch.setattr(sys, "path", [str(site)])

    with pytest.raises(SystemExit) as stopped:
        agentloom_server.main()

    assert stopped.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in lines] == ["agentloom-server", "agentloom-server"]
