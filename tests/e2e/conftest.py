"""Browser tests: Debian's chromium driven by Playwright against Django's live server."""

import shutil

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    # Never a downloaded browser: the system chromium, with background networking off,
    # since this machine has no network beyond its package mirrors.
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture
def page(page):
    page.set_default_timeout(10_000)  # a broken page should fail in seconds, not hang for 30
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    # The Content-Security-Policy is enforced: a blocked script or style is a bug, not noise.
    assert [e for e in errors if "Content Security Policy" in e or "Refused to" in e] == []
    # A refused form comes back as a 400 or 422 page with its own message (the test checks the
    # message); the browser logs the status as a failed load.
    allowed = ("404", "429", "400 (Bad Request)", "422 (Unprocessable")
    assert [e for e in errors if not any(status in e for status in allowed)] == []


@pytest.fixture
def sign_in(live_server):
    def sign_in(page, username: str, password: str) -> None:
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"{live_server.url}/")

    return sign_in
