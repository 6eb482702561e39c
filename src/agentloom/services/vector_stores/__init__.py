"""Vector stores: the API, ingestion as jobs, the in-memory indexes and search."""
