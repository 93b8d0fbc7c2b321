import pytest
from playwright.sync_api import expect

from chat.services import conversation_create
from memoryapp.models import Memory
from memoryapp.services import remember
from tests.factories import user_turn

pytestmark = pytest.mark.django_db(transaction=True)


def test_forget_in_chat_names_what_it_forgot_and_undo_brings_it_back(page, live_server, make_user, sign_in):
    alice = make_user("alice")
    for text in ["I'm a pediatric nurse in Montreal.", "I live in Lisbon."]:
        remember(alice, user_turn(alice, text))
    conversation = conversation_create(user=alice)
    sign_in(page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/c/{conversation.public_id}/")

    page.get_by_label("Message").fill("Please forget that I'm a nurse.")
    page.get_by_role("button", name="Send").click()
    forgotten = page.get_by_role("list", name="Forgotten")
    expect(forgotten).to_contain_text("Forgot “The user is a pediatric nurse.”")
    expect(page.locator("#turn-2")).not_to_contain_text("nurse")  # the reply was not given it
    assert Memory.objects.get(user=alice, text="The user is a pediatric nurse.").deleted_at is not None

    forgotten.get_by_role("button", name="Undo").click()
    expect(page.get_by_role("status").filter(has_text="Restored")).to_contain_text("The user is a pediatric nurse.")
    assert Memory.objects.get(user=alice, text="The user is a pediatric nurse.").deleted_at is None


def test_add_a_memory_by_hand_and_see_it_with_its_provenance(page, live_server, make_user, sign_in):
    alice = make_user("alice")
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("link", name="Memories").click()

    page.get_by_label("Add a memory").fill("My password is hunter2.")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("alert")).to_contain_text("never stored")
    expect(page.get_by_label("Add a memory")).to_have_value("My password is hunter2.")  # nothing lost

    page.get_by_label("Add a memory").fill("I'm allergic to penicillin.")
    page.get_by_role("button", name="Add").click()
    expect(page.locator(".memory-list")).to_contain_text("I'm allergic to penicillin.")
    expect(page.locator(".memory-list")).to_contain_text("added by hand")
    page.get_by_role("link", name="I'm allergic to penicillin.").click()
    expect(page.locator("dl.facts")).to_contain_text("added by hand on")
    assert Memory.objects.get(user=alice).added_by_hand


def test_restore_a_memory_from_recently_deleted(page, live_server, make_user, sign_in):
    alice = make_user("alice")
    remember(alice, user_turn(alice, "I live in Lisbon."))
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("link", name="Memories").click()
    page.get_by_role("button", name="Delete “The user lives in Lisbon.”").click()
    expect(page.locator(".memory-list")).to_contain_text("Deleted “The user lives in Lisbon.”")

    page.get_by_role("link", name="Recently deleted").click()
    expect(page.locator(".memory-list")).to_contain_text("you deleted it")
    page.get_by_role("button", name="Restore “The user lives in Lisbon.”").click()
    expect(page.get_by_text("Restored “The user lives in Lisbon.”")).to_be_visible()
    expect(page.locator(".memory-list")).to_contain_text("Nothing deleted in the last 30 days.")
    assert Memory.objects.get(user=alice).deleted_at is None
