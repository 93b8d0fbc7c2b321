from django.db import migrations, models


def relation_age_slots(apps, schema_editor):
    """Memories already stored that give a relation's age get that slot; the rest keep theirs."""
    from memoryapp.slots import slot_of

    Memory = apps.get_model("memoryapp", "Memory")
    for memory in Memory.objects.filter(slot="", text__iregex=r"^the user.s .* is [0-9a-z-]+( years? old)?\.?$").only(
        "id", "text"
    ):
        slot = slot_of(memory.text)
        if slot:
            Memory.objects.filter(pk=memory.pk).update(slot=slot)


class Migration(migrations.Migration):
    dependencies = [
        ("memoryapp", "0006_memory_event_extended"),
    ]

    operations = [
        migrations.AlterField(
            model_name="memory",
            name="slot",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        migrations.RunPython(relation_age_slots, migrations.RunPython.noop),
    ]
