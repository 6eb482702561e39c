"""Content safety: shields that check text, and the service that runs them as guardrails.

Nothing here imports the web framework; :mod:`agentloom.server.routes.safety` serves it.
"""
