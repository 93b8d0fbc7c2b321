import logging

from django_tasks_db.management.commands import db_worker

from chat.worker import MemoryWorker
from core.llm import ModelUnavailable
from memoryapp.write.extract import warm_up, warm_up_wanted

logger = logging.getLogger("chat.worker")


class Command(db_worker.Command):
    help = (
        "Run the memory worker: django-tasks-db's worker on the 'worker' backend, which waits out a "
        "database outage (reconnecting with back-off) and holds a lease, so that the writes of a "
        "worker that died are queued again by the next (chat.worker)."
    )

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.set_defaults(backend_name="worker", reload=False)

    def handle(
        self,
        *,
        verbosity: int,
        queue_name: str,
        interval: float,
        batch: bool,
        backend_name: str,
        startup_delay: bool,
        reload: bool,
        max_tasks: int | None,
        worker_id: str,
        exclude_queues: str,
        **options,
    ) -> None:
        if reload:
            raise db_worker.CommandError("The memory worker does not reload; run it again after a change.")
        self.configure_logging(verbosity)
        queue_names = queue_name.split(",")
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_names:
            raise db_worker.CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = MemoryWorker(
            queue_names=queue_names,
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=worker_id,
            excluded_queue_names=excluded,
        )
        worker.configure_signals()
        if warm_up_wanted():
            try:
                logger.info("the model read the write path's instructions in %.1f s", warm_up())
            except ModelUnavailable as exc:  # the first write pays for them instead
                logger.warning("the model could not read the write path's instructions ahead: %s", exc)
        worker.run()
