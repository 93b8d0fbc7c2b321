from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
