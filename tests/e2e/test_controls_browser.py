import pytest
from playwright.sync_api import expect

from chat.services import conversation_create
from memoryapp.models import Memory
from memoryapp.write import remember
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


def test_pause_memory_stops_reading_and_writing_and_the_chat_says_so(page, live_server, make_user, sign_in):
    alice = make_user("alice")
    remember(alice, user_turn(alice, "I live in Lisbon."))
    conversation = conversation_create(user=alice)
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("link", name="Memories").click()
    page.get_by_role("button", name="Pause memory").click()
    expect(page.locator("#memory-switch")).to_contain_text("Memory is paused.")

    page.goto(f"{live_server.url}/c/{conversation.public_id}/")
    expect(page.locator(".memory-paused")).to_contain_text("Memory is paused")
    page.get_by_label("Message").fill("I teach chemistry. Where do I live?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#notice-1")).to_contain_text("Not remembered: memory was paused.")
    expect(page.locator("#turn-2")).to_contain_text("No memories used.")
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user lives in Lisbon."]

    page.get_by_role("button", name="Turn memory back on").click()
    expect(page.locator(".memory-paused")).to_have_count(0)
    page.get_by_label("Message").fill("Where do I live?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#turn-4 .recalled")).to_contain_text("The user lives in Lisbon.")


def test_a_temporary_chat_is_marked_and_uses_no_memory(page, live_server, make_user, sign_in):
    alice = make_user("alice")
    remember(alice, user_turn(alice, "I live in Lisbon."))
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("button", name="New temporary chat").click()
    expect(page.locator(".temporary-chat")).to_contain_text("Temporary chat.")
    page.get_by_label("Message").fill("I have a cat named Miso. Where do I live?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#turn-2")).to_contain_text("No memories used.")
    page.get_by_role("link", name="Conversations").click()
    expect(page.locator(".conversation-list li").first.locator(".tag")).to_have_text("temporary")
    assert Memory.objects.filter(user=alice).count() == 1


def test_a_secret_is_removed_from_the_message_in_one_click(page, live_server, make_user, sign_in):
    make_user("alice")
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Message").fill("My wifi password is Tr0ub4dor&3, can you keep it?")
    page.get_by_role("button", name="Send").click()
    notice = page.locator(".secret-notice")
    expect(notice).to_contain_text("The message itself is still in this")
    expect(page.locator("#turn-2")).not_to_contain_text("Tr0ub4dor")  # the reply never repeats it
    notice.get_by_role("button", name="Remove it from the message").click()
    expect(page.locator("#turn-1 .content")).to_have_text("My wifi password is [password removed], can you keep it?")
    expect(page.locator(".secret-notice")).to_contain_text("The value was removed from this message.")


def test_the_account_page_changes_the_password_and_revokes_the_token(page, live_server, make_user, sign_in):
    make_user("alice")
    sign_in(page, "alice", "alice-password-1")
    page.get_by_role("link", name="alice").click()
    page.get_by_role("button", name="Create a token").click()
    expect(page.locator("#new-token")).to_be_visible()
    page.get_by_role("button", name="Revoke the token").click()
    expect(page.locator("#token-state")).to_contain_text("No API token is active")
    page.get_by_role("link", name="Change your password").click()
    page.get_by_label("Old password").fill("alice-password-1")
    page.get_by_label("New password", exact=True).fill("a-fresh-passphrase-42")
    page.get_by_label("New password confirmation").fill("a-fresh-passphrase-42")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()
