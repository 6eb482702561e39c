"""``python -m agentloom``: the ``agentloom`` command, with its installation check."""

from agentloom_server import main

main()
