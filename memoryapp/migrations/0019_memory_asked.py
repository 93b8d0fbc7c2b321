"""Whether a memory's keys include the fact asked (Memory.asked), filled from the keys already
stored."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memoryapp', '0018_memory_need'),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='asked',
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.RunSQL(
            """
            UPDATE memoryapp_memory m SET asked = TRUE
            WHERE EXISTS (
                SELECT 1 FROM memoryapp_memorykey k
                WHERE k.user_id = m.user_id AND k.memory_id = m.id AND k.embedding_model = m.keys_model
                  AND k.kind = 'question'
            )
            """,
            migrations.RunSQL.noop,
        ),
    ]
