"""The entry point of the ``agentloom-server`` distribution: its ``agentloom`` and
``agentloom-server`` commands and ``python -m agentloom``.

It lives outside the ``agentloom`` package so that no file another distribution writes into
that package can replace it: it checks that the package is this distribution's
(:mod:`agentloom_server.ownership`) before importing anything of it, and refuses to start,
exit status 2, when it is not.
"""

from __future__ import annotations

import sys

from agentloom_server.ownership import DISTRIBUTION, problems

__all__ = ["main"]


def main() -> None:
    """Run the ``agentloom`` command line once the ``agentloom`` package is known to be ours."""
    found = problems()
    if found:
        for problem in found:
            print(f"{DISTRIBUTION}: {problem}", file=sys.stderr)
        raise SystemExit(2)
    from agentloom.cli.main import main as cli

    cli()
