"""One TLS context a process, and none with CAs where a base URL is plain http."""

from __future__ import annotations

import ssl

from agentloom.tls import client_context, context_for


def test_https_base_urls_share_the_process_context() -> None:
    assert context_for("https://api.example.com/v1") is client_context()
    assert context_for("HTTPS://api.example.com/v1") is client_context()
    assert client_context().cert_store_stats()["x509_ca"] > 0


def test_a_plain_http_base_url_gets_a_context_that_trusts_no_one() -> None:
    context = context_for("http://127.0.0.1:8321/v1")

    assert context is not client_context()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
