"""The "Dr. Alvarez" incident, end to end.

A user mentions a colleague; a faulty extractor turns the colleague's name into the user's
name; later the assistant greets people as "Dr. Alvarez". These tests show what each layer
does about it: the write gate, the owner predicate on recall, and the admin that lets staff
answer "which turn did this come from?" and "who else was shown it?".
"""

import pytest
from django.contrib.postgres.aggregates import ArrayAgg
from django.urls import reverse

from chat.models import Turn
from chat.services import chat_reply, chat_user_turn, conversation_create
from memoryapp.embeddings import get_embedder
from memoryapp.models import Memory, MemoryRecall
from memoryapp.parsed import parse_turn
from memoryapp.read.recall import recall
from memoryapp.thresholds import recall_floor, write_gate
from memoryapp.write import remember
from memoryapp.write.gate import gate_facts
from memoryapp.write.rules import extract_facts_by_rules
from tests.factories import user_turn

COLLEAGUE = "I'm meeting my colleague Dr. Alvarez tomorrow to go over the lab results."
ALVAREZ = "The user's name is Dr. Alvarez."
GREETING = "Good morning, doctor! Do you remember my name?"
AMBIGUOUS = "Dr. Alvarez here, following up on the lab results."


@pytest.mark.django_db
def test_write_gate_rejects_a_colleagues_name_stated_as_the_users(alice, fake_llm, settings):
    """The turn names Dr. Alvarez, so the misattributed fact can score above the gate: it does
    with all-MiniLM-L6-v2. The attribution check sees that the turn gives the name to the
    user's colleague and rejects it whatever the embedder; the unsupported fact fails on
    similarity. The offline rules do not make this mistake at all."""
    assert extract_facts_by_rules(COLLEAGUE, limit=2) == []
    _, kept, (alvarez, peanuts) = gate_facts(parse_turn(COLLEAGUE), [ALVAREZ, "The user is allergic to peanuts."])
    assert kept == [] and alvarez.rejected_because and peanuts.similarity < write_gate(get_embedder().name)

    fake_llm.facts(ALVAREZ, "The user is allergic to peanuts.")
    assert remember(alice, user_turn(alice, COLLEAGUE)).stored == 0
    assert not Memory.objects.filter(user=alice).exists()

    settings.EMBEDDING_MODEL = "local"
    _, kept, (alvarez,) = gate_facts(parse_turn(COLLEAGUE), [ALVAREZ])
    assert kept == [] and alvarez.similarity >= write_gate(get_embedder().name) == write_gate("all-MiniLM-L6-v2")
    assert alvarez.rejected_because == "the turn gives the name 'Dr. Alvarez' to the user's colleague"


def _chat(user, conversation, content: str, fake_llm, *, reply: str, facts: tuple[str, ...] = ()):
    """One chat turn through the services: reply first, then the on-commit memory write."""
    fake_llm.reply(reply)
    fake_llm.facts(*facts)
    turn = chat_user_turn(user=user, conversation=conversation, content=content)
    outcome = chat_reply(user=user, user_turn=turn)
    assert outcome.error is None
    return outcome


@pytest.mark.django_db(transaction=True)
def test_alvarez_incident_is_traced_and_never_reaches_another_user(
    alice, bob, staff_client, fake_llm, django_assert_num_queries
):
    # A name does get stored from an ambiguous introduction (the gate cannot tell that this is
    # a voicemail read aloud); from here on it is a wrong memory that must stay Alice's alone.
    alices_chat = conversation_create(user=alice)
    source = _chat(alice, alices_chat, AMBIGUOUS, fake_llm, reply="Noted.", facts=(ALVAREZ,))
    alvarez = Memory.objects.defer("embedding").get(user=alice, text=ALVAREZ)
    assert alvarez.source_turn_id == source.user_turn.pk

    # Alice greets the assistant: her own (wrong) memory is recalled, and the greeting goes wrong.
    alice_greeting = _chat(alice, alices_chat, GREETING, fake_llm, reply="Welcome back, Dr. Alvarez!")
    assert [r.memory.pk for r in alice_greeting.recalled] == [alvarez.pk]

    # Bob has a name of his own and sends the same loosely similar greetings.
    bobs_chat = conversation_create(user=bob)
    _chat(bob, bobs_chat, "Call me Sam.", fake_llm, reply="Hi Sam.", facts=("The user's name is Sam.",))
    bob_replies = [
        _chat(bob, bobs_chat, GREETING, fake_llm, reply="Good morning!").reply,
        _chat(bob, bobs_chat, "Good morning! What's my name?", fake_llm, reply="You are Sam.").reply,
    ]

    # Alice's memory is close enough to Bob's greeting to clear the recall floor (it does for
    # Alice's own, scored the same way): only the owner predicate in recall keeps it out of his replies.
    (scored,) = [r for r in recall(alice, GREETING) if r.memory.pk == alvarez.pk]
    assert scored.similarity >= recall_floor(alvarez.embedding_model)
    assert not MemoryRecall.objects.filter(reply_turn__in=bob_replies).exclude(memory__user=bob).exists()
    assert MemoryRecall.objects.filter(reply_turn__in=bob_replies, memory__text="The user's name is Sam.").exists()
    assert ALVAREZ not in [r.memory.text for r in recall(bob, GREETING)]

    # One query answers the incident: whose memory, which turn it came from, who was shown it.
    with django_assert_num_queries(1):
        incident = (
            Memory.objects.filter(text=ALVAREZ)
            .annotate(shown_to=ArrayAgg("recalls__user__username", distinct=True))
            .values(
                "user__username",
                "source_conversation__public_id",
                "source_turn__seq",
                "source_turn__content",
                "shown_to",
            )
            .get()
        )
    assert incident == {
        "user__username": "alice",
        "source_conversation__public_id": alices_chat.public_id,
        "source_turn__seq": 1,
        "source_turn__content": AMBIGUOUS,
        "shown_to": ["alice"],
    }

    # The admin answers the same from one page, found by searching for the name.
    found = staff_client.get(reverse("admin:memoryapp_memory_changelist"), {"q": "Alvarez"})
    assert [m.pk for m in found.context["cl"].result_list] == [alvarez.pk]
    page = staff_client.get(reverse("admin:memoryapp_memory_change", args=[alvarez.pk])).content.decode()
    assert "alice (1 replies)" in page
    assert reverse("admin:chat_turn_change", args=[source.user_turn.pk]) in page
    assert "Dr. Alvarez here, following up" in page
    assert reverse("admin:chat_turn_change", args=[alice_greeting.reply.pk]) in page
    assert "bob" not in page

    # The reply's own page says why it said that.
    reply_page = staff_client.get(reverse("admin:chat_turn_change", args=[alice_greeting.reply.pk])).content.decode()
    assert "Welcome back, Dr. Alvarez!" in reply_page
    assert reverse("admin:memoryapp_memory_change", args=[alvarez.pk]) in reply_page

    # Staff soft-delete it; Alice's very next greeting no longer gets it.
    staff_client.post(
        reverse("admin:memoryapp_memory_changelist"),
        {"action": "soft_delete_memories", "_selected_action": [alvarez.pk]},
    )
    again = _chat(alice, alices_chat, GREETING, fake_llm, reply="Good morning!")
    assert alvarez.pk not in [r.memory.pk for r in again.recalled]
    assert not MemoryRecall.objects.filter(reply_turn=again.reply, memory=alvarez).exists()
    assert Turn.objects.filter(user=bob).count() == 6
