from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from core.llm import ModelUnavailable
from memoryapp.embeddings import get_embedder
from memoryapp.services import memory_reembed_batch, memory_reembed_pending


class Command(BaseCommand):
    help = (
        "Re-embed memories with the configured embedding model (MEMORY_EMBEDDING_MODEL), in batches. "
        "Run it after changing the model: until a memory is moved, recall does not compare it. "
        "Stopped anywhere, it resumes where it stopped."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--user", help="only this username's memories (default: everyone's)")
        parser.add_argument("--batch-size", type=int, default=256, help="memories per embedding call (default 256)")

    def handle(self, *args, user: str | None, batch_size: int, **options) -> None:
        if not 1 <= batch_size <= 2048:
            raise CommandError(f"--batch-size must be between 1 and 2048; got {batch_size}")
        user_id = None
        if user is not None:
            found = get_user_model().objects.filter(username=user).values_list("pk", flat=True).first()
            if found is None:
                raise CommandError(f"no user named {user!r}")
            user_id = found
        model = get_embedder().name
        pending = memory_reembed_pending(user_id=user_id)
        moved = last_id = 0
        with tqdm(total=pending, unit="memory", desc=f"re-embedding with {model}", disable=None) as bar:
            while True:
                try:
                    updated, last_id = memory_reembed_batch(after_id=last_id, user_id=user_id, batch_size=batch_size)
                except ModelUnavailable as exc:
                    raise CommandError(
                        f"{exc}. {moved} memories were moved before it; run the command again to go on."
                    ) from exc
                if not last_id:
                    break
                moved += updated
                bar.update(updated)
        left = memory_reembed_pending(user_id=user_id)
        self.stdout.write(f"Moved {moved} memories to {model}; {left} left on another model.")
