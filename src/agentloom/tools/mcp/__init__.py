"""The ``mcp`` tool: a remote MCP server's tools, listed and called by the server."""
