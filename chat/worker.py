"""The memory worker: django-tasks-db's worker, made to outlive its database and to hold a lease.

- **Outages.** When PostgreSQL goes away (a restart, a failover, a cut network), the worker does
  not exit: it logs each attempt and reconnects with back-off (0.5 s, doubling, at most 30 s),
  then carries on where it was. A write cut off by the outage is left RUNNING; the lease below
  brings it back.
- **Lease.** A thread of the worker renews its row in `WorkerLease` six times a lease
  (`MEMORY_WORKER_LEASE_SECONDS`, 60 s). Once a lease, and whenever the worker (re)connects, it
  queues again the writes still running under a worker whose lease has lapsed: one killed with
  -9, or whose machine died, is replaced without a hand (`requeue_memory_writes` remains, for a
  schedule of one's own). A database that itself started less than a lease ago has seen no
  worker renew since: nothing is taken from anyone until a lease has passed.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker

from chat.models import WorkerLease
from chat.services import memory_writes_requeue
from core.outage import DATABASE_UNAVAILABLE

logger = logging.getLogger(__name__)

BACKOFF_FIRST_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 30.0
RENEWALS_PER_LEASE = 6


def lease_period() -> timedelta:
    return timedelta(seconds=settings.MEMORY_WORKER_LEASE_SECONDS)


def requeue_abandoned(*, mine: str | None = None) -> dict[str, int]:
    """Queue again the writes of workers whose lease has lapsed (see the module's docstring), and
    with `mine`, a worker's own id, the writes it was running when its database went away: a
    worker between tasks runs none."""
    lease = lease_period()
    with connection.cursor() as cursor:
        cursor.execute("SELECT now() - pg_postmaster_start_time()")
        (database_up,) = cursor.fetchone()
    settled = database_up >= lease
    if not settled and mine is None:
        return {}
    cutoff = timezone.now() - lease
    alive: set[str] = set()
    if settled:
        WorkerLease.objects.filter(renewed_at__lt=cutoff - timedelta(days=1)).delete()
        alive = set(WorkerLease.objects.filter(renewed_at__gte=cutoff).values_list("worker_id", flat=True))

    def abandoned(worker_ids: list[str]) -> bool:
        last = worker_ids[-1] if worker_ids else None
        if mine is not None and last == mine:
            return True
        return settled and last not in alive

    done = memory_writes_requeue(older_than=lease, abandoned=abandoned)
    if any(done.values()):
        logger.warning("abandoned memory writes: %s", ", ".join(f"{n} {what}" for what, n in done.items()))
    return done


def renew(worker_id: str) -> None:
    """Renew the worker's lease (taking it, the first time)."""
    now = timezone.now()
    WorkerLease.objects.update_or_create(
        worker_id=worker_id,
        defaults={"renewed_at": now},
        create_defaults={
            "hostname": socket.gethostname()[:255],
            "pid": os.getpid(),
            "started_at": now,
            "renewed_at": now,
        },
    )


class _Lease(threading.Thread):
    """Renews the worker's lease and looks for abandoned writes, on a database connection of its own."""

    def __init__(self, worker_id: str) -> None:
        super().__init__(name=f"lease-{worker_id[:8]}", daemon=True)
        self.worker_id = worker_id
        self.stopped = threading.Event()

    def run(self) -> None:
        every = settings.MEMORY_WORKER_LEASE_SECONDS / RENEWALS_PER_LEASE
        last_look = time.monotonic()
        try:
            while not self.stopped.wait(every):
                try:
                    close_old_connections()
                    renew(self.worker_id)
                    if time.monotonic() - last_look >= settings.MEMORY_WORKER_LEASE_SECONDS:
                        last_look = time.monotonic()
                        requeue_abandoned()
                except DATABASE_UNAVAILABLE:
                    connection.close()  # the worker's own loop says so; try again next time
        finally:
            connection.close()


class MemoryWorker(Worker):
    """django-tasks-db's `Worker` with reconnection and a lease (see the module's docstring)."""

    def run(self) -> None:
        lease = _Lease(self.worker_id)
        attempt = 0
        try:
            while self.running:
                try:
                    close_old_connections()
                    renew(self.worker_id)
                    if attempt:
                        logger.warning("database reachable again after %d attempt(s); carrying on", attempt)
                        attempt = 0
                    requeue_abandoned(mine=self.worker_id)
                    if not lease.is_alive():
                        lease.start()
                    super().run()
                    return
                except DATABASE_UNAVAILABLE as exc:
                    attempt += 1
                    delay = min(BACKOFF_MAX_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** (attempt - 1))
                    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    logger.warning(
                        "database unavailable (%s); reconnecting in %.1f s (attempt %d)", reason, delay, attempt
                    )
                    connection.close()
                    time.sleep(delay)
        finally:
            lease.stopped.set()
            self._release()

    def _release(self) -> None:
        """A worker that stops cleanly gives its lease up, so its writes need not wait for it to lapse."""
        try:
            close_old_connections()
            WorkerLease.objects.filter(worker_id=self.worker_id).delete()
        except DATABASE_UNAVAILABLE:
            pass
        finally:
            connection.close()
