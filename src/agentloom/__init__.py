"""agentloom: an open, self-hostable OpenAI Responses API server and agent SDK."""

__version__ = "0.1.0"

__all__ = ["__version__"]
