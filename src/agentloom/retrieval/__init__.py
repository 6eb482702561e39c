"""Retrieval: file parsing, chunking, embeddings and the keyword + vector index.

Nothing here imports the web framework or `agentloom.server`.
"""
