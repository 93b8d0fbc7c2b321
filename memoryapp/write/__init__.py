"""The write path: a user turn's durable facts, extracted, gated and stored (see `pipeline`)."""

from memoryapp.write.pipeline import Written, remember

__all__ = ["Written", "remember"]
