from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memoryapp"
    verbose_name = "Memory"
