"""The gateway: Chat Completions and Embeddings passed through to the backends."""
