"""Keep a memory's row, vector included, in one heap tuple.

PostgreSQL starts moving a row's values to the TOAST table once the row passes about 2 KB. A
512-dimension vector alone is 2,056 bytes, so every row of the multilingual embedder went out
of line, and recall's exact scan fetched each vector through the TOAST index (366,000 buffer
hits for one user's 100,000 memories, against 25,000 for 384-dimension rows that fit). Keeping
the vector inline with `SET STORAGE MAIN` is not enough: the toaster then moves the row's small
text and hash out instead. With the target at its maximum, a row is toasted only when it would
not fit a page (a 3,072-dimension endpoint vector still goes out of line). Rows written before
move inline on their next update (a re-embedding rewrites them).
"""

from django.db import migrations

TABLE = "memoryapp_memory"


class Migration(migrations.Migration):
    dependencies = [
        ("memoryapp", "0004_recall_standing"),
    ]

    operations = [
        migrations.RunSQL(
            f"ALTER TABLE {TABLE} SET (toast_tuple_target = 8160)",
            reverse_sql=f"ALTER TABLE {TABLE} RESET (toast_tuple_target)",
        ),
    ]
