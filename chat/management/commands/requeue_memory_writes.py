from django.core.management.base import BaseCommand

from chat.management.commands.purge_deleted import parse_age
from chat.services import memory_writes_requeue


class Command(BaseCommand):
    help = (
        "Queue again the memory writes a stopped worker left behind: tasks still marked running after "
        "--older-than (default 10m), and queued turns whose task never reached the queue."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--older-than", default="10m", help="age of a write taken as abandoned, e.g. 10m, 0m")

    def handle(self, *args, older_than: str, **options) -> None:
        done = memory_writes_requeue(older_than=parse_age(older_than))
        self.stdout.write("Memory writes: " + ", ".join(f"{count} {what}" for what, count in done.items()) + ".")
