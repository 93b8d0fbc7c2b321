from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Shared plumbing"

    def ready(self) -> None:
        from core import sessions, tokens

        tokens.connect()
        sessions.connect()
