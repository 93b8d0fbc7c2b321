"""Temporary chats; turns said while memory was paused or in a temporary chat; turns whose secrets were removed."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('chat', '0007_worker_lease'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversation',
            name='temporary',
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name='turn',
            name='redacted_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AlterField(
            model_name='turn',
            name='memory_state',
            field=models.CharField(blank=True, choices=[('pending', 'Not yet processed'), ('queued', 'Queued'), ('done', 'Processed'), ('failed', 'Failed (can be retried)'), ('withheld', 'Nothing kept: it carried a secret'), ('forget', 'Nothing kept: a request to forget'), ('paused', 'Nothing kept: memory was paused'), ('temporary', 'Nothing kept: a temporary chat'), ('', 'Not a user turn')], default='', max_length=16),
        ),
    ]
