"""Files and vector stores in Chromium: upload with a progress bar, a store made and the file
added, ingestion watched until it finishes, and the search tester's hits with their sides."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

NOTES = (
    b"The harbour ferry leaves at nine every morning.\n\n"
    b"Lighthouse keepers log the weather forecast twice a day.\n\n"
    b"Fishing boats return before the evening tide.\n"
)


def test_upload_a_file_add_it_to_a_store_and_search_it(page: Any, origin: str, shoot: Any) -> None:
    page.goto(f"{origin}/console/#/files")
    page.get_by_label("File", exact=True).set_input_files(
        {"name": "harbour.txt", "mimeType": "text/plain", "buffer": NOTES}
    )
    page.get_by_role("button", name="Upload").click()

    expect(page.locator(".upload")).to_contain_text("Uploaded harbour.txt as file")
    expect(page.locator(".upload progress")).to_have_attribute("value", "100")
    expect(page.locator("table tbody tr")).to_contain_text("harbour.txt")
    shoot("files")

    page.get_by_role("link", name="Vector stores").click()
    page.get_by_label("Name").fill("harbour notes")
    page.get_by_role("button", name="Create vector store").click()
    expect(page.get_by_role("heading", name="harbour notes")).to_be_visible()
    expect(page.get_by_label("Existing file")).to_contain_text("harbour.txt")
    page.get_by_role("button", name="Add to store").click()

    files = page.locator("section").filter(has_text="Files").locator("table tbody tr")
    expect(files).to_contain_text("harbour.txt")
    expect(files.locator(".badge")).to_have_text("completed")
    expect(page.locator("p[aria-live]")).to_contain_text("1 ready, 0 in progress, 0 failed of 1")

    page.get_by_label("Query").fill("weather forecast lighthouse")
    page.get_by_role("button", name="Search").click()
    hits = page.locator(".search-results tbody tr")
    expect(hits.first).to_contain_text("harbour.txt")
    expect(hits.first).to_contain_text("Lighthouse keepers")
    expect(hits.first.locator(".side.yes")).to_have_count(2)  # both sides found it
    assert float(hits.first.locator("td").nth(1).inner_text()) > 0
    shoot("vector-store")

    page.get_by_role("link", name="← Vector stores").click()
    row = page.locator("table tbody tr").filter(has_text="harbour notes")
    expect(row).to_contain_text("1/1 ready")
    shoot("vector-stores")
