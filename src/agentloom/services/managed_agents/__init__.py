"""Managed agents: agents that live on the server, their runs, messages and tasks."""
