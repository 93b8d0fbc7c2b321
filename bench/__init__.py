"""Benchmarks of the memory's read and write paths, run by `python manage.py bench_memory`.

`synthetic` and `mem0_side` import nothing from Django or the app, so the same data can be
generated inside the separate mem0 venv; everything else runs inside the app's process.
"""
