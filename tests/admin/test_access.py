import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def admin_urls(history) -> list[str]:
    return [
        reverse("admin:index"),
        reverse("admin:memoryapp_memory_changelist"),
        reverse("admin:memoryapp_memory_change", args=[history.timezone.pk]),
        reverse("admin:memoryapp_memoryrecall_changelist"),
        reverse("admin:chat_conversation_changelist"),
        reverse("admin:chat_conversation_change", args=[history.conversation.pk]),
        reverse("admin:chat_turn_change", args=[history.reply.pk]),
    ]


@pytest.mark.parametrize("who", ["anonymous", "alice"])
def test_non_staff_are_sent_to_the_admin_login(alice, alices_history, who):
    client = Client()
    if who == "alice":
        client.force_login(alice)  # a signed-in user, but not staff
    for url in admin_urls(alices_history):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("admin:login")), url


def test_non_staff_cannot_run_the_delete_action(alice, alices_history):
    client = Client()
    client.force_login(alice)

    response = client.post(
        reverse("admin:memoryapp_memory_changelist"),
        {"action": "soft_delete_memories", "_selected_action": [alices_history.timezone.pk]},
    )

    assert response.status_code == 302
    alices_history.timezone.refresh_from_db()
    assert alices_history.timezone.deleted_at is None


def test_staff_get_every_admin_page(staff_client, alices_history):
    for url in admin_urls(alices_history):
        assert staff_client.get(url).status_code == 200, url
