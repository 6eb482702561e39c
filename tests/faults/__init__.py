"""The fault suite (issue 20): what the server does when what it depends on fails."""
