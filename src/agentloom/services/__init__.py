"""The resources around the agent loop: files, containers, prompts, conversations and vector
stores (their API, ingestion and search), one module per resource."""
