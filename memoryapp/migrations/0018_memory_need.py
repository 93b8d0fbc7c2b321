"""Needs once per wording (MemoryNeed), filled from the keys already stored, and the keys'
index by wording."""

import django.db.models.deletion
import pgvector.django.vector
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memoryapp', '0017_memory_settings_indexed_model'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='MemoryNeed',
            fields=[
                ('pk', models.CompositePrimaryKey('user', 'embedding_model', 'text', blank=True, editable=False, primary_key=True, serialize=False)),
                ('user', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('embedding_model', models.CharField(max_length=100)),
                ('text', models.CharField(max_length=200)),
                ('embedding', pgvector.django.vector.VectorField()),
            ],
        ),
        migrations.AddIndex(
            model_name='memorykey',
            index=models.Index(condition=models.Q(('kind', 'question'), _negated=True), fields=['user', 'embedding_model', 'text', 'memory'], name='memory_key_need_wording'),
        ),
        migrations.RunSQL(  # the vectors inline, as in memories and keys (0005)
            "ALTER TABLE memoryapp_memoryneed SET (toast_tuple_target = 8160)",
            reverse_sql="ALTER TABLE memoryapp_memoryneed RESET (toast_tuple_target)",
        ),
        migrations.RunSQL(
            """
            INSERT INTO memoryapp_memoryneed (user_id, embedding_model, text, embedding)
            SELECT DISTINCT ON (user_id, embedding_model, text) user_id, embedding_model, text, embedding
            FROM memoryapp_memorykey WHERE kind <> 'question'
            ORDER BY user_id, embedding_model, text, id
            """,
            migrations.RunSQL.noop,
        ),
    ]
