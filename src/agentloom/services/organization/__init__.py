"""The organization: projects, keys, the audit log, usage, its reports and rate limits."""
