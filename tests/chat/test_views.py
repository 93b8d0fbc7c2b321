import pytest
from django.test import Client
from django.urls import reverse

from chat.models import Turn
from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.models import Memory

pytestmark = pytest.mark.django_db(transaction=True)

PRIYA = "Call me Priya, and I'm always in UTC."
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def alices_conversation(alice):
    conversation = conversation_create(user=alice)
    turn = chat_user_turn(user=alice, conversation=conversation, content=PRIYA)
    chat_reply(user=alice, user_turn=turn)
    return conversation


def _urls(conversation, memory_id):
    pid = conversation.public_id
    return [
        ("get", reverse("chat:conversation_detail", args=[pid])),
        ("post", reverse("chat:turn_create", args=[pid])),
        ("post", reverse("chat:turn_reply", args=[pid, 1])),
        ("get", reverse("chat:turn_memory", args=[pid, 1])),
        ("post", reverse("chat:turn_memory", args=[pid, 1])),
        ("get", reverse("memoryapp:memory_detail", args=[memory_id])),
    ]


def test_every_chat_page_needs_a_login(alices_conversation):
    memory = Memory.objects.first()
    anonymous = Client()
    for method, url in [("get", reverse("chat:conversation_list")), *_urls(alices_conversation, memory.pk)]:
        response = getattr(anonymous, method)(url, {"content": "hi"} if method == "post" else None)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url


def test_another_users_conversation_turns_and_memories_are_404(alices_conversation, bob_client):
    memory = Memory.objects.first()
    for method, url in _urls(alices_conversation, memory.pk):
        response = getattr(bob_client, method)(url, {"content": "hi"} if method == "post" else None)
        assert response.status_code == 404, url
    assert Turn.objects.filter(conversation=alices_conversation).count() == 2  # nothing was added


def test_conversation_list_shows_only_the_owners_conversations(alices_conversation, bob_client, alice_client):
    assert alices_conversation.public_id in alice_client.get("/").content.decode()
    assert alices_conversation.public_id not in bob_client.get("/").content.decode()


def test_new_conversation_button_creates_one_and_opens_it(alice_client, alice):
    response = alice_client.post(reverse("chat:conversation_list"))
    conversation = alice.conversations.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("chat:conversation_detail", args=[conversation.public_id])


def test_htmx_post_appends_the_user_turn_and_asks_for_the_reply(alice_client, alice):
    conversation = conversation_create(user=alice)
    response = alice_client.post(reverse("chat:turn_create", args=[conversation.public_id]), {"content": PRIYA}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="turn-1"' in html and "Call me Priya" in html
    assert f'data-stream="/c/{conversation.public_id}/turns/1/reply/stream/"' in html
    assert "<html" not in html  # a fragment, not the page

    reply = alice_client.post(reverse("chat:turn_reply", args=[conversation.public_id, 1]), **HTMX)
    reply_html = reply.content.decode()
    assert 'id="turn-2"' in reply_html and "Offline mode" in reply_html
    assert 'id="notice-1" hx-swap-oob="true"' in reply_html
    assert "Memory updated: saved" in reply_html and "The user&#x27;s timezone is UTC." in reply_html


def test_plain_form_post_without_javascript_answers_and_redirects_to_the_turn(alice_client, alice):
    conversation = conversation_create(user=alice)
    url = reverse("chat:turn_create", args=[conversation.public_id])
    response = alice_client.post(url, {"content": PRIYA})
    assert response.status_code == 302
    assert response["Location"].endswith("#turn-1")
    page = alice_client.get(response["Location"]).content.decode()
    assert "Call me Priya" in page and "Offline mode" in page and "Memory updated: saved" in page


def test_memories_used_are_listed_under_the_reply_with_a_link(alice_client, alice, alices_conversation):
    second = conversation_create(user=alice)
    alice_client.post(reverse("chat:turn_create", args=[second.public_id]), {"content": "What timezone am I in?"})
    page = alice_client.get(reverse("chat:conversation_detail", args=[second.public_id])).content.decode()
    memory = Memory.objects.get(user=alice, text="The user's timezone is UTC.")
    assert "Memories used (1)" in page
    assert reverse("memoryapp:memory_detail", args=[memory.pk]) in page


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "Say something first"), ("   \n ", "Say something first"), ("x" * 8001, "limited to 8,000 characters")],
    ids=["empty", "whitespace", "too-long"],
)
def test_invalid_turns_are_rejected_with_a_message_and_nothing_is_saved(alice_client, alice, content, message):
    conversation = conversation_create(user=alice)
    url = reverse("chat:turn_create", args=[conversation.public_id])

    page = alice_client.post(url, {"content": content})
    fragment = alice_client.post(url, {"content": content}, **HTMX)

    assert page.status_code == 400 and message in page.content.decode()
    assert fragment.status_code == 422 and message in fragment.content.decode()
    assert fragment["HX-Retarget"] == "#composer-errors"
    assert not Turn.objects.filter(conversation=conversation).exists()


def test_model_failure_shows_an_error_with_retry_and_never_a_500(alice_client, alice, fake_llm):
    conversation = conversation_create(user=alice)
    alice_client.post(reverse("chat:turn_create", args=[conversation.public_id]), {"content": "hello"}, **HTMX)
    fake_llm.fail(503)
    response = alice_client.post(reverse("chat:turn_reply", args=[conversation.public_id, 1]), **HTMX)

    html = response.content.decode()
    assert response.status_code == 200
    assert "The language model answered with an error (503)." in html and ">Retry</button>" in html
    page = alice_client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()
    assert "This message has no reply yet." in page and "hello" in page

    fake_llm.reply("Hello again!")
    retry = alice_client.post(reverse("chat:turn_reply", args=[conversation.public_id, 1]), **HTMX)
    assert "Hello again!" in retry.content.decode()


def test_plain_post_with_a_failing_model_keeps_the_turn_and_explains(alice_client, alice, fake_llm):
    conversation = conversation_create(user=alice)
    fake_llm.fail(500)
    response = alice_client.post(
        reverse("chat:turn_create", args=[conversation.public_id]), {"content": "hello"}, follow=True
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "The language model answered with an error (500)." in html and "Your message was saved" in html
    assert Turn.objects.filter(conversation=conversation, role="user").count() == 1


def test_a_failed_memory_write_offers_a_retry_that_works(alice_client, alice, fake_llm):
    conversation = conversation_create(user=alice)
    fake_llm.reply("Noted.")
    fake_llm.fail(500)
    alice_client.post(reverse("chat:turn_create", args=[conversation.public_id]), {"content": "I live in Lisbon."})
    page = alice_client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()
    assert "Memory could not be updated" in page and "Retry memory" in page

    fake_llm.facts("The user lives in Lisbon.")
    response = alice_client.post(reverse("chat:turn_memory", args=[conversation.public_id, 1]), **HTMX)
    assert "Memory updated: saved" in response.content.decode()


def test_conversation_page_queries_do_not_grow_with_turns(alice_client, alice, django_assert_max_num_queries):
    conversation = conversation_create(user=alice)
    for n in range(15):
        turn = chat_user_turn(user=alice, conversation=conversation, content=f"I like topic {n}.")
        chat_reply(user=alice, user_turn=turn)
    with django_assert_max_num_queries(10):
        response = alice_client.get(reverse("chat:conversation_detail", args=[conversation.public_id]))
    assert response.content.decode().count('class="turn ') == 30


def test_memory_detail_shows_provenance_and_the_replies_it_went_into(alice_client, alice, alices_conversation):
    second = conversation_create(user=alice)
    alice_client.post(reverse("chat:turn_create", args=[second.public_id]), {"content": "What timezone am I in?"})
    memory = Memory.objects.get(user=alice, text="The user's timezone is UTC.")
    page = alice_client.get(reverse("memoryapp:memory_detail", args=[memory.pk])).content.decode()
    assert f"{alices_conversation.public_id}, turn #1" in page
    assert f"/c/{alices_conversation.public_id}/?turn=1#turn-1" in page
    assert f"{second.public_id} #2" in page and "rank 1" in page.split("<details")[-1]  # the rank is in the details


def test_signup_logs_in_and_opens_the_conversations(client, django_user_model):
    response = client.post(
        reverse("signup"),
        {"username": "carol", "password1": "a-long-passphrase-91", "password2": "a-long-passphrase-91"},
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert django_user_model.objects.filter(username="carol").exists()


def test_a_secret_is_never_remembered_and_the_page_says_so(alice_client, alice):
    conversation = conversation_create(user=alice)
    url = reverse("chat:turn_create", args=[conversation.public_id])
    alice_client.post(url, {"content": "I live in Lisbon and my PIN is 4921, remember it."})

    turn = Turn.objects.get(conversation=conversation, role="user")
    assert turn.memory_state == Turn.MemoryState.WITHHELD
    assert not Memory.objects.filter(user=alice).exists()
    page = alice_client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()
    assert "Nothing from this message was saved to memory" in page
    assert "The message itself is still in this" in page  # what is true: the turn keeps the PIN until removed


def test_a_request_to_forget_refreshes_nothing_deletes_what_it_names_and_says_so(alice_client, alice):
    conversation = conversation_create(user=alice)
    url = reverse("chat:turn_create", args=[conversation.public_id])
    alice_client.post(url, {"content": "I live in Porto."})
    alice_client.post(url, {"content": "Please forget that I live in Porto."})

    memory = Memory.objects.get(user=alice)
    assert memory.times_seen == 1 and memory.evidence.count() == 1  # restated by the request: not refreshed
    assert memory.deleted_at is not None
    forget = Turn.objects.get(conversation=conversation, role="user", seq=3)
    assert forget.memory_state == Turn.MemoryState.FORGET
    page = alice_client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()
    assert "Forgot “The user lives in Porto.”" in page and reverse("memoryapp:memory_list") in page


def test_the_chat_page_says_when_replies_are_offline_and_why_the_local_model_is_not_running(
    alice_client, alices_conversation, settings
):
    page = reverse("chat:conversation_detail", args=[alices_conversation.public_id])
    settings.LOCAL_MODEL_UNAVAILABLE = "it could not be fetched"
    html = alice_client.get(page).content.decode()
    assert "Offline replies." in html and "The local language model is not running: it could not be fetched." in html
    assert "<code>make run</code> tries again at its next start." in html

    settings.LOCAL_MODEL_UNAVAILABLE = ""  # started offline on purpose (make run OFFLINE=1)
    html = alice_client.get(page).content.decode()
    assert "Offline replies." in html and "No language model is configured." in html
    assert "not running" not in html


def test_the_chat_page_says_nothing_of_offline_replies_when_a_model_answers(alice_client, alice, fake_llm):
    conversation = conversation_create(user=alice)
    html = alice_client.get(reverse("chat:conversation_detail", args=[conversation.public_id])).content.decode()
    assert "Offline replies." not in html


def test_a_run_of_messages_the_model_could_not_read_is_said_above_the_conversation(alice_client, alice, fake_llm):
    conversation = conversation_create(user=alice)
    create = reverse("chat:turn_create", args=[conversation.public_id])
    page = reverse("chat:conversation_detail", args=[conversation.public_id])
    for count, content in enumerate(["I live in Lisbon.", "I work as a nurse.", "I have two cats."], start=1):
        fake_llm.reply("Noted.")
        fake_llm.fail(500)  # the memory write's call
        alice_client.post(create, {"content": content})
        html = alice_client.get(page).content.decode()
        assert html.count(">Retry memory</button>") == count
        assert ("Memory is not keeping up." in html) == (count == 3)
    assert "could not read your last 3 messages" in " ".join(html.split())

    fake_llm.reply("Noted.")
    fake_llm.facts("The user speaks Portuguese.")
    alice_client.post(create, {"content": "I speak Portuguese."})
    html = alice_client.get(page).content.decode()
    assert "Memory is not keeping up." not in html and html.count(">Retry memory</button>") == 3
