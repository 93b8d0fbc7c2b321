"""The demo account's pages, and every page at a phone's width (390 px) with nothing off screen."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from chat.management.commands.ensure_demo_user import DEMO_PASSWORD, DEMO_USERNAME
from chat.models import Conversation
from memoryapp.models import Memory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo(django_user_model):
    call_command("ensure_demo_user")
    return django_user_model.objects.get(username=DEMO_USERNAME)


def test_the_demo_shows_conversations_memories_and_their_traces(page, live_server, demo, sign_in):
    sign_in(page, DEMO_USERNAME, DEMO_PASSWORD)
    expect(page.locator(".conversation-list li")).to_have_count(2)
    page.locator(".conversation-list li a").last.click()  # the first conversation
    expect(page.locator(".memory-notice").first).to_contain_text("Memory updated: saved")
    page.get_by_role("link", name="Memories").click()
    expect(page.locator(".memory-list")).to_contain_text("The user lives in Porto.")
    expect(page.locator(".memory-list")).to_contain_text("The user is allergic to peanuts and cashews.")
    page.get_by_role("link", name="The user is allergic to peanuts and cashews.").click()
    expect(page.locator("section.memory-detail")).to_contain_text("Corrected")
    expect(page.locator("section.memory-detail")).to_contain_text("Used in replies")
    page.get_by_role("link", name="← All memories").click()
    page.get_by_role("link", name="Recently deleted").click()
    expect(page.locator(".memory-list")).to_contain_text("The user lives in Lisbon.")  # replaced by Porto


def _overflow(page) -> list[str]:
    """What sticks out past the right edge of the window, if anything."""
    return page.evaluate(
        """() => {
          const width = document.documentElement.clientWidth;
          const out = [];
          if (document.documentElement.scrollWidth > width) out.push(`page ${document.documentElement.scrollWidth}px`);
          for (const el of document.querySelectorAll('a, button, input, textarea, summary, h1, p, li')) {
            const box = el.getBoundingClientRect();
            const text = (el.textContent || el.value || '').trim().slice(0, 40);
            const right = Math.round(box.right);
            if (box.width && box.right > width + 0.5) out.push(`${el.tagName} "${text}" ends at ${right}px`);
          }
          return out;
        }"""
    )


def test_every_page_fits_a_390px_phone(page, live_server, demo, sign_in):
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, DEMO_USERNAME, DEMO_PASSWORD)
    memory = Memory.objects.filter(user=demo, deleted_at__isnull=True).order_by("pk").first()
    urls = ["/", "/memories/", "/memories/about-me/", "/memories/deleted/", "/accounts/", "/accounts/password_change/"]
    urls += [f"/c/{c.public_id}/" for c in Conversation.objects.filter(user=demo)]
    urls += [f"/memories/{memory.pk}/", "/memories/?s=where+do+I+live"]
    for url in urls:
        page.goto(f"{live_server.url}{url}")
        assert _overflow(page) == [], url
