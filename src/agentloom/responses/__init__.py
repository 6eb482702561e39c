"""The Responses resource: the service that prepares, runs and stores a response, its
background jobs, and the pass-through to backends that serve the Responses API themselves."""
