pytest_plugins = [
    "tests.plugins.split",
    "tests.plugins.db",
    "tests.plugins.groups",
    "tests.plugins.backend",
    "tests.plugins.server",
    "tests.plugins.sandbox",
    "tests.plugins.tenants",
    "tests.plugins.webhooks",
]
