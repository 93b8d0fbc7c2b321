"""The demo account, with something to show: two short conversations and what memory made of them.

Everything is written the way a chat writes it (chat_user_turn, chat_reply, the write path), so
every trace link on the demo's pages works: provenance, a restated fact, a fact replaced by a
newer one, a correction by hand and a standing instruction.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.test.utils import override_settings
from django.utils import timezone

from chat.models import Conversation
from chat.services import chat_reply, chat_user_turn, conversation_create, conversation_delete_all
from core.llm import ModelUnavailable
from memoryapp.models import Memory
from memoryapp.selectors import memory_list
from memoryapp.services import memory_correct

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-memory-2026"  # noqa: S105 - a local demo account, printed on purpose

# Two conversations, a few days apart in a real account; each line is one user turn.
CONVERSATIONS = [
    [
        "Hi! My name is Sam and I live in Lisbon.",
        "I work as a pediatric nurse.",
        "I'm allergic to peanuts.",
        "Please keep your answers short from now on.",
    ],
    [
        "I moved to Porto last month.",
        "As I said, I work as a pediatric nurse, mostly night shifts.",
        "Can you suggest a quick dinner I could cook?",
    ],
]
# Then, as the user would on the memory page: a memory corrected by hand.
CORRECTION = ("The user is allergic to peanuts.", "The user is allergic to peanuts and cashews.")


def _converse(user) -> int:
    """Say every demo turn, in order, and return how many memories the account holds.
    The writes run here, as MEMORY_TASK_BACKEND=immediate runs them, and offline (the
    grammar extractor and the offline reply), so the demo is the same on every machine."""
    for lines in CONVERSATIONS:
        conversation = conversation_create(user=user)
        for line in lines:
            turn = chat_user_turn(user=user, conversation=conversation, content=line)
            outcome = chat_reply(user=user, user_turn=turn)
            if outcome.error:
                raise ModelUnavailable(outcome.error)
    old, new = CORRECTION
    corrected = memory_list(user=user).filter(text=old).first()
    if corrected is not None:
        memory_correct(user=user, memory_id=corrected.pk, text=new)
    return memory_list(user=user).count()


class Command(BaseCommand):
    help = (
        "Create the demo account if it does not exist, give it two conversations if it has none, "
        "and print how to sign in."
    )

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        user, created = User.objects.get_or_create(username=DEMO_USERNAME)
        if created or not user.has_usable_password():
            user.set_password(DEMO_PASSWORD)
            user.save()
        state = "created" if created else "exists"
        note = ""
        if not Conversation.objects.filter(user=user).exists():
            started = timezone.now()
            try:
                with override_settings(MEMORY_TASK_BACKEND="immediate", LLM_ENABLED=False):
                    count = _converse(user)
            except ModelUnavailable as exc:
                # The embedding endpoint is down: the account stays, its data comes on a later start.
                conversation_delete_all(user=user)
                Memory.objects.filter(user=user, created_at__gte=started).delete()
                self.stderr.write(f"The demo conversations could not be written ({exc}); the next start tries again.")
            else:
                note = f", with {len(CONVERSATIONS)} conversations and {count} memories"
        self.stdout.write(
            self.style.SUCCESS(f"Demo account ({state}{note}): username {DEMO_USERNAME!r}, password {DEMO_PASSWORD!r}")
        )
