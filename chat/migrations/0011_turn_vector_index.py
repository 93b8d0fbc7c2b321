"""An approximate (HNSW) index for each embedding model whose turns are indexed already.

The chat history reference makes a model's index when its first turn is indexed
(chat.history.vector_index); this makes it for the turns indexed before that existed. An HNSW
index needs one dimension, so each is an expression index partial on its model's name."""

import hashlib
import re

from django.db import migrations


def _name(model: str, dims: int) -> str:
    # as chat.history.vector_index_name names it
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:24]
    return f"turn_hnsw_{slug}_{int(dims)}_{hashlib.sha256(f'{model}:{dims}'.encode()).hexdigest()[:8]}"


def make_indexes(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT embedding_model, vector_dims(embedding) FROM chat_turn WHERE embedding IS NOT NULL")
        for model, dims in cursor.fetchall():
            cursor.execute(
                f"""CREATE INDEX IF NOT EXISTS {connection.ops.quote_name(_name(model, dims))} ON chat_turn
                    USING hnsw ((embedding::vector({int(dims)})) vector_cosine_ops)
                    WHERE embedding_model = %s AND embedding IS NOT NULL""",
                [model],
            )


def drop_indexes(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'chat_turn' AND indexname LIKE %s", [r"turn\_hnsw\_%"]
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f"DROP INDEX IF EXISTS {schema_editor.connection.ops.quote_name(name)}")


class Migration(migrations.Migration):
    dependencies = [("chat", "0010_history_recall")]

    operations = [migrations.RunPython(make_indexes, drop_indexes)]
