"""The chat history reference in a browser: a reply names the earlier conversation it quoted and
links to the turn; turning the switch off on the memory page stops it."""

import pytest
from playwright.sync_api import expect

from chat.services import conversation_create
from tests.factories import chat

pytestmark = pytest.mark.django_db(transaction=True)

DINNER = "We had dinner at Trattoria Lucca on Friday and the tiramisu there was the best I've ever had."
ASK = "What was the name of the place where I had that amazing tiramisu?"


def test_a_reply_links_to_the_earlier_turn_it_quoted_and_the_switch_turns_it_off(page, live_server, make_user, sign_in):
    alice = make_user("alice")
    earlier = chat(alice, DINNER)
    sign_in(page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/c/{conversation_create(user=alice).public_id}/")

    page.get_by_label("Message").fill(ASK)
    page.get_by_role("button", name="Send").click()
    quoted = page.locator("#turn-2 .history-used")
    expect(quoted).to_contain_text("From your earlier conversations (1)")
    link = quoted.get_by_role("link", name="From your conversation of")
    expect(link).to_have_attribute("href", f"/c/{earlier.public_id}/#turn-1")
    link.click()
    expect(page.locator("#turn-1")).to_contain_text("Trattoria Lucca")

    page.get_by_role("link", name="Memories").click()
    page.get_by_role("button", name="Turn off reference chat history").click()
    expect(page.get_by_role("alert")).to_contain_text("Chat history is no longer referenced")
    page.goto(f"{live_server.url}/c/{conversation_create(user=alice).public_id}/")
    page.get_by_label("Message").fill(ASK)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#turn-2")).to_contain_text("Offline mode")
    expect(page.locator("#turn-2 .history-used")).to_have_count(0)
