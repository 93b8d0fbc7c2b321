from pathlib import Path

import pytest
from playwright.sync_api import expect

from chat.models import Turn
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
    page.wait_for_load_state()  # the page's script is what makes Enter send
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


LONG_ANSWER = (
    "A sourdough starter is flour and water that wild yeast and bacteria have colonised. "
    "Feed it twice a day for a week, keep it warm, and use it when it doubles within hours. "
    "Mix it with flour, water and salt, fold the dough a few times, shape it, proof it overnight "
    "in the fridge, and bake it hot in a covered pot."
)


def test_a_reply_appears_as_it_is_written_and_stop_keeps_what_was_written(
    page, live_server, output_path, make_user, sign_in, fake_llm
):
    out = Path(output_path)
    out.mkdir(parents=True, exist_ok=True)
    alice = make_user("alice")
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("button", name="New conversation").click()

    fake_llm.stream(LONG_ANSWER, piece_chars=6, piece_delay=0.15)  # about 9 s in all
    page.get_by_label("Message").fill("How do I start baking sourdough?")
    page.get_by_role("button", name="Send").click()

    pending = page.locator("#pending-1")
    expect(pending.locator(".content")).to_contain_text("A sourdough starter")
    expect(pending.locator(".progress")).to_contain_text("Writing…")
    page.screenshot(path=str(out / "1-reply-streaming.png"), full_page=True)
    pending.get_by_role("button", name="Stop").click()

    reply = page.locator("#turn-2")
    expect(reply).to_contain_text("[Stopped before the end.]")
    expect(pending).to_have_count(0)
    expect(reply).to_contain_text("No memories used.")
    page.screenshot(path=str(out / "2-reply-stopped.png"), full_page=True)
    stored = Turn.objects.get(user=alice, seq=2)
    assert stored.content.startswith("A sourdough starter") and stored.content.endswith("[Stopped before the end.]")
    assert len(stored.content) < len(LONG_ANSWER)

    fake_llm.stream("Bake it at 250 °C for the first 20 minutes.")
    page.get_by_label("Message").fill("And the oven temperature?")
    page.keyboard.press("Enter")
    expect(page.locator("#turn-4")).to_contain_text("Bake it at 250 °C for the first 20 minutes.")
    expect(page.locator("#turn-4")).not_to_contain_text("Stopped")
    assert Turn.objects.get(user=alice, seq=4).content == "Bake it at 250 °C for the first 20 minutes."


def test_a_reply_that_fails_while_streaming_offers_retry_which_streams_again(
    page, live_server, make_user, sign_in, fake_llm
):
    make_user("alice")
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("button", name="New conversation").click()

    fake_llm.drop_mid_stream(LONG_ANSWER, after=4)
    page.get_by_label("Message").fill("How do I start baking sourdough?")
    page.get_by_role("button", name="Send").click()
    failure = page.locator("#reply-error-1")
    expect(failure).to_contain_text("The language model stopped part-way through its answer.")

    fake_llm.stream("Start with a starter.", piece_delay=0.05)
    failure.get_by_role("button", name="Retry").click()
    expect(page.locator("#turn-2")).to_contain_text("Start with a starter.")
    expect(page.locator("#reply-error-1")).to_have_count(0)
