"""Key the conversation log by owner: (user_id, id) primary keys, and composite foreign keys
between one user's conversations and turns in place of Django's (core.distribution)."""

from django.db import migrations

from core.distribution import owner_foreign_key as _reference
from core.distribution import primary_key_with_owner as _keyed


class Migration(migrations.Migration):
    # After the memory tables dropped their single-column references to these tables' ids.
    dependencies = [("chat", "0012_owner_in_keys"), ("memoryapp", "0015_owner_in_keys")]

    operations = [
        _keyed("chat_conversation"),
        _keyed("chat_turn"),
        _keyed("chat_historyrecall"),
        _reference("chat_turn", "conversation_id", "chat_conversation"),
        _reference("chat_turn", "reply_to_id", "chat_turn"),
        _reference("chat_historyrecall", "conversation_id", "chat_conversation"),
        _reference("chat_historyrecall", "probe_turn_id", "chat_turn"),
        _reference("chat_historyrecall", "reply_turn_id", "chat_turn"),
        _reference("chat_historyrecall", "source_turn_id", "chat_turn"),
    ]
