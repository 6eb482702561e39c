pytest_plugins = [
    "tests.plugins.db",
    "tests.plugins.sql_split",
    "tests.plugins.backend",
    "tests.plugins.server",
    "tests.plugins.sandbox",
    "tests.plugins.tenants",
    "tests.plugins.webhooks",
]
