"""Who is calling: API keys, the admin key, and the project a request works in."""
