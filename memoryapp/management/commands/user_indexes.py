from django.conf import settings
from django.core.management.base import BaseCommand

from memoryapp import user_index


class Command(BaseCommand):
    help = (
        "Make the approximate indexes of every user with MEMORY_USER_INDEX_AT live memories or more "
        "(the memory worker makes them as a user reaches the mark; this is for users already past it), "
        "making the lists again for users who have doubled since, "
        "or with --prune drop those of users who are gone or under half the mark."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--prune", action="store_true", help="drop the indexes users no longer need")

    def handle(self, *args, prune: bool, **options) -> None:
        if prune:
            dropped = user_index.prune()
            self.stdout.write(f"Dropped the approximate indexes of {len(dropped)} users.")
            return
        if not user_index.enabled():
            self.stdout.write("Approximate indexes are off (MEMORY_USER_INDEX_AT is unset): none were made.")
            return
        made = [user_id for user_id, model, dims in user_index.heavy_users() if user_index.ensure(user_id, model, dims)]
        self.stdout.write(
            f"{len(made)} users with {settings.MEMORY_USER_INDEX_AT:,} memories or more have their approximate indexes."
        )
