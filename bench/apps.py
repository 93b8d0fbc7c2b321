from django.apps import AppConfig


class BenchConfig(AppConfig):
    """The benchmarks: `bench_memory` and `bench_reply`. No models."""

    name = "bench"
