from django.db import migrations


def unmark_orders(apps, schema_editor):
    """A standing instruction stored before the gate refused orders (memoryapp.orders) is no longer
    given to every reply: it stays a memory, quoted as data."""
    from memoryapp.orders import orders_problem

    Memory = apps.get_model("memoryapp", "Memory")
    carrying = [m.pk for m in Memory.objects.filter(standing=True).only("id", "text") if orders_problem(m.text)]
    Memory.objects.filter(pk__in=carrying).update(standing=False)


class Migration(migrations.Migration):
    dependencies = [
        ("memoryapp", "0011_memory_added_by_hand"),
    ]

    operations = [
        migrations.RunPython(unmark_orders, migrations.RunPython.noop),
    ]
