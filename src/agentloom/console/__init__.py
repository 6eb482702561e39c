"""The console's static assets, served by :mod:`agentloom.server.routes.console`."""
