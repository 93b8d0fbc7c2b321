import re
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.services import conversation_purge_temporary
from core.ratelimit import purge_stale
from memoryapp import user_index
from memoryapp.services import memory_purge_deleted

_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


def parse_age(text: str) -> timedelta:
    match = re.fullmatch(r"(\d+)([dhm])", text.strip())
    if not match:
        raise CommandError(f"--older-than takes a number and a unit (d, h or m), like 30d; got {text!r}")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


class Command(BaseCommand):
    help = (
        "Hard-delete memories soft-deleted longer ago than the retention period, with their evidence and recall "
        "rows, and temporary chats whose last turn is CHAT_TEMPORARY_HOURS old."
    )

    def add_arguments(self, parser) -> None:
        days = settings.MEMORY_RESTORE_DAYS
        parser.add_argument(
            "--older-than",
            default=f"{days}d",
            help=f"retention, e.g. 30d, 12h, 90m (default {days}d: MEMORY_RESTORE_DAYS, as long as a deleted memory "
            "can be restored)",
        )

    def handle(self, *args, older_than: str, **options) -> None:
        age = parse_age(older_than)
        removed = memory_purge_deleted(older_than=age)
        temporary = conversation_purge_temporary()
        stale = purge_stale()
        unindexed = user_index.prune()
        summary = ", ".join(f"{count} {name}" for name, count in sorted(removed.items())) or "nothing"
        self.stdout.write(
            f"Purged memories deleted more than {older_than} ago: {summary}. "
            f"Expired temporary chats: {temporary}. Stale rate-limit rows: {stale}. "
            f"Users whose approximate indexes were dropped: {len(unindexed)}."
        )
