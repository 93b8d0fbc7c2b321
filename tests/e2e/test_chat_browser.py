from pathlib import Path

import pytest
from playwright.sync_api import expect

from memoryapp.models import Memory, MemoryRecall

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_new_user_signs_up_tells_a_fact_and_sees_it_used_in_another_conversation(page, live_server, output_path):
    out = Path(output_path)
    out.mkdir(parents=True, exist_ok=True)

    page.goto(f"{live_server.url}/accounts/signup/")
    page.locator("#id_username").fill("priya")
    page.locator("#id_password1").fill("a-long-passphrase-91")
    page.locator("#id_password2").fill("a-long-passphrase-91")
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Conversations")).to_be_visible()

    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Message").fill("Call me Priya, and I'm always in UTC.")
    page.get_by_role("button", name="Send").click()

    notice = page.locator("#notice-1")
    expect(notice).to_contain_text("Memory updated: saved")
    expect(notice).to_contain_text("The user's timezone is UTC.")
    expect(page.locator("#turn-2")).to_contain_text("Offline mode")
    expect(page.get_by_label("Message")).to_have_value("")  # the composer is cleared
    expect(page.locator("#conversation-title")).to_have_text("Call me Priya, and I'm always in UTC.")
    page.screenshot(path=str(out / "1-memory-written.png"), full_page=True)

    page.get_by_role("link", name="Conversations").click()
    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Message").fill("What timezone am I in?")
    page.keyboard.press("Enter")  # Enter sends

    used = page.locator("#turn-2 .recalled")
    expect(used).to_contain_text("Memories used (1)")
    expect(used).to_contain_text("The user's timezone is UTC.")
    page.screenshot(path=str(out / "2-memory-used.png"), full_page=True)

    memory = Memory.objects.get(user__username="priya", text="The user's timezone is UTC.")
    assert MemoryRecall.objects.filter(memory=memory, user__username="priya").count() == 1

    used.get_by_role("link", name="The user's timezone is UTC.").click()
    expect(page.get_by_role("heading", name="Used in replies")).to_be_visible()
    page.get_by_role("link", name="turn #1").click()
    expect(page.locator("#turn-1")).to_have_class("turn user highlight")
    page.screenshot(path=str(out / "3-source-turn.png"), full_page=True)
