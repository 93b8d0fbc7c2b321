"""The chat with the memory write on a real worker: the reply comes at once, the notice follows."""

import pytest
from playwright.sync_api import expect

from memoryapp.models import Memory
from tests.workers import finish, worker

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_notice_says_saving_until_the_worker_has_written_then_shows_the_memory(
    page, live_server, sign_in, django_user_model, worker_env
):
    django_user_model.objects.create_user(username="dana", password="a-long-passphrase-91")
    sign_in(page, "dana", "a-long-passphrase-91")
    page.get_by_role("button", name="New conversation").click()
    page.get_by_label("Message").fill("I play the cello in an amateur orchestra.")
    page.get_by_role("button", name="Send").click()

    expect(page.locator("#turn-2")).to_contain_text("Offline mode")  # the reply did not wait
    notice = page.locator("#notice-1")
    expect(notice).to_contain_text("Saving memory…")
    page.wait_for_timeout(1500)  # a poll or two while no worker runs: still saving
    expect(notice).to_contain_text("Saving memory…")
    assert not Memory.objects.filter(user__username="dana").exists()

    finish(worker(worker_env, "--batch"))

    expect(notice).to_contain_text("Memory updated: saved", timeout=15_000)  # no reload
    expect(notice).to_contain_text("The user plays the cello in an amateur orchestra.")
    expect(notice).not_to_contain_text("Saving memory")
