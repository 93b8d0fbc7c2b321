from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memoryapp"
    verbose_name = "Memory"

    def ready(self) -> None:
        from memoryapp import checks  # noqa: F401 - registers the system checks
