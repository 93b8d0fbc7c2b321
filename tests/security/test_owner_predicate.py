"""Every statement on user data carries its owner.

The walk below drives every user-facing page, htmx partial and API route (a chat turn with
recall and the memory write included) and captures the SQL actually executed. Any statement
that reads or changes a table of user data must name the acting user's id: a missing tenant
predicate is the hole that let one user's memory reach another.
"""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from chat.services import conversation_create
from memoryapp.models import Memory

pytestmark = pytest.mark.django_db(transaction=True)

USER_TABLES = (
    "memoryapp_memory",
    "memoryapp_memoryevidence",
    "memoryapp_memoryrecall",
    "memoryapp_memoryevent",
    "chat_conversation",
    "chat_turn",
)
_TOUCHES = re.compile(r'(?:FROM|UPDATE|INTO|JOIN)\s+"?(' + "|".join(USER_TABLES) + r')"?\b', re.I)


def _statements_missing_owner(queries, user_id: int) -> list[str]:
    missing = []
    owner = re.compile(rf'user_id"?\s*(?:=\s*{user_id}\b|IN\s*\(\s*{user_id}\s*\))')
    for query in queries:
        sql = query["sql"]
        if not _TOUCHES.search(sql):
            continue
        if sql.lstrip().upper().startswith("INSERT"):
            if "user_id" not in sql or str(user_id) not in sql:
                missing.append(sql)
        elif not owner.search(sql):
            missing.append(sql)
    return missing


def _walk(client: Client, user) -> None:
    htmx = {"HTTP_HX_REQUEST": "true"}
    client.get("/")
    client.post(reverse("chat:conversation_list"))
    conversation = user.conversations.latest("id")
    pid = conversation.public_id
    for text in ["Call me Priya, and I'm always in UTC.", "I live in Lisbon.", "What timezone am I in?"]:
        client.post(reverse("chat:turn_create", args=[pid]), {"content": text}, **htmx)
        seq = user.turns.filter(conversation=conversation, role="user").latest("seq").seq
        client.post(reverse("chat:turn_reply", args=[pid, seq]), **htmx)
    client.post(reverse("chat:turn_create", args=[pid]), {"content": "I'm vegetarian."})  # without JavaScript
    client.get(reverse("chat:conversation_detail", args=[pid]))
    client.get(reverse("chat:turn_memory", args=[pid, 1]), **htmx)
    client.post(reverse("chat:turn_memory", args=[pid, 1]), **htmx)

    memory = Memory.objects.filter(user=user, text="The user lives in Lisbon.").get()
    client.get(reverse("memoryapp:memory_list"))
    client.get(reverse("memoryapp:memory_list"), {"q": "lisbon"}, **htmx)
    client.get(reverse("memoryapp:memory_list"), {"s": "Which city do I live in?"})
    client.get(reverse("memoryapp:memory_detail", args=[memory.pk]))
    client.post(reverse("memoryapp:memory_edit", args=[memory.pk]), {"text": "The user lives in Porto."}, **htmx)
    client.post(reverse("memoryapp:memory_delete", args=[memory.pk]), **htmx)
    client.post(reverse("memoryapp:memory_undo", args=[memory.pk]), **htmx)
    client.get(reverse("memoryapp:memory_export"))
    client.get(reverse("memoryapp:memory_forget_all"))
    client.post(reverse("memoryapp:memory_forget_all"), {"confirm": "on"})
    client.get(reverse("chat:conversation_delete", args=[pid]))
    client.post(reverse("chat:conversation_delete", args=[pid]), {"forget_memories": "on"})


def test_every_statement_on_user_data_in_the_app_carries_the_owner(alice, bob):
    conversation_create(user=bob)  # another tenant exists in every table the walk touches
    client = Client()
    client.force_login(alice)
    with CaptureQueriesContext(connection) as captured:
        _walk(client, alice)

    touched = [q for q in captured.captured_queries if _TOUCHES.search(q["sql"])]
    assert len(touched) > 50  # the walk really exercised the user tables
    assert _statements_missing_owner(captured.captured_queries, alice.pk) == []


def test_the_audit_catches_a_statement_without_the_owner(alice):
    with CaptureQueriesContext(connection) as captured:
        list(Memory.objects.filter(text="anything"))
        list(Memory.objects.filter(user=alice))
    missing = _statements_missing_owner(captured.captured_queries, alice.pk)
    assert len(missing) == 1 and "anything" in missing[0]
