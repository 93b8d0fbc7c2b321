"""Per-user memory switches (pause), and each statement's words as it left the memory; the
statements already stored take the memory's words of today, the nearest there is."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('memoryapp', '0012_standing_obeyed'),
    ]

    operations = [
        migrations.CreateModel(
            name='MemorySettings',
            fields=[
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to=settings.AUTH_USER_MODEL)),
                ('paused', models.BooleanField(default=False)),
                ('changed_at', models.DateTimeField(auto_now=True)),
            ],
            options={
                'verbose_name_plural': 'memory settings',
            },
        ),
        migrations.AddField(
            model_name='memoryevidence',
            name='text',
            field=models.TextField(blank=True, db_default='', default=''),
        ),
        migrations.RunSQL(
            "UPDATE memoryapp_memoryevidence e SET text = m.text FROM memoryapp_memory m "
            "WHERE m.id = e.memory_id AND m.user_id = e.user_id",
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
