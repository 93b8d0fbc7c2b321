from pathlib import Path

import pytest
from playwright.sync_api import expect

from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.models import Memory, MemoryRecall

pytestmark = pytest.mark.django_db(transaction=True)


def test_trace_a_memory_to_its_source_delete_it_and_see_chat_stop_using_it(
    page, live_server, output_path, make_user, sign_in
):
    out = Path(output_path)
    out.mkdir(parents=True, exist_ok=True)
    alice = make_user("alice")
    source = conversation_create(user=alice)
    turn = chat_user_turn(user=alice, conversation=source, content="Call me Priya, and I'm always in UTC.")
    chat_reply(user=alice, user_turn=turn)
    sign_in(page, "alice", "alice-password-1")

    page.get_by_role("link", name="Memories").click()
    expect(page.get_by_role("heading", name="What the assistant remembers about you")).to_be_visible()
    expect(page.locator(".memory-list")).to_contain_text("The user's timezone is UTC.")
    page.screenshot(path=str(out / "1-dashboard.png"), full_page=True)

    page.get_by_role("link", name="The user's timezone is UTC.").click()
    expect(page.get_by_role("heading", name="“The user's timezone is UTC.”")).to_be_visible()
    page.get_by_role("link", name=f"{source.public_id}, turn #1").click()
    expect(page.locator("#turn-1")).to_have_class("turn user highlight")
    expect(page.locator("#turn-1")).to_contain_text("Call me Priya")
    page.screenshot(path=str(out / "2-source-turn.png"), full_page=True)

    page.get_by_role("link", name="Memories").click()
    page.get_by_role("button", name="Delete “The user's timezone is UTC.”").click()
    expect(page.locator(".memory-list")).to_contain_text("Deleted “The user's timezone is UTC.”")
    expect(page.get_by_role("button", name="Undo")).to_be_visible()
    page.screenshot(path=str(out / "3-deleted.png"), full_page=True)
    assert Memory.objects.get(user=alice, text="The user's timezone is UTC.").deleted_at is not None

    page.get_by_role("link", name="Conversations").click()
    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Message").fill("What timezone am I in?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#turn-2")).to_contain_text("Offline mode")
    # the deleted memory is neither recalled nor shown (another memory of the user may be)
    expect(page.locator("#turn-2")).not_to_contain_text("UTC")
    deleted = Memory.objects.get(user=alice, text="The user's timezone is UTC.")
    assert not MemoryRecall.objects.filter(memory=deleted, created_at__gte=deleted.deleted_at).exists()
    page.screenshot(path=str(out / "4-not-used.png"), full_page=True)
