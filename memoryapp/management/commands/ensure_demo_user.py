from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "demo-memory-2026"  # noqa: S105 - a local demo account, printed on purpose


class Command(BaseCommand):
    help = "Create the demo account if it does not exist, and print how to sign in."

    def handle(self, *args, **options) -> None:
        User = get_user_model()
        user, created = User.objects.get_or_create(username=DEMO_USERNAME)
        if created or not user.has_usable_password():
            user.set_password(DEMO_PASSWORD)
            user.save()
        state = "created" if created else "exists"
        self.stdout.write(
            self.style.SUCCESS(f"Demo account ({state}): username {DEMO_USERNAME!r}, password {DEMO_PASSWORD!r}")
        )
