from django.apps import AppConfig


class EvalConfig(AppConfig):
    """The quality harness: `evaluate_memory` and the sets it reads. No models."""

    name = "eval"
