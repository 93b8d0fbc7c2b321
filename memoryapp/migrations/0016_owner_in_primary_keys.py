"""Key the memory tables by owner: (user_id, id) primary keys, and composite foreign keys to
the user's memories, conversations and turns in place of Django's (core.distribution). The
settings table is keyed by its user already."""

from django.db import migrations

from core.distribution import owner_foreign_key as _reference
from core.distribution import primary_key_with_owner as _keyed


class Migration(migrations.Migration):
    dependencies = [("memoryapp", "0015_owner_in_keys"), ("chat", "0013_owner_in_primary_keys")]

    operations = [
        _keyed("memoryapp_memory"),
        _keyed("memoryapp_memorykey"),
        _keyed("memoryapp_memoryevidence"),
        _keyed("memoryapp_memoryrecall"),
        _keyed("memoryapp_memoryevent"),
        _reference("memoryapp_memory", "source_conversation_id", "chat_conversation"),
        _reference("memoryapp_memory", "source_turn_id", "chat_turn"),
        _reference("memoryapp_memorykey", "memory_id", "memoryapp_memory"),
        _reference("memoryapp_memoryevidence", "memory_id", "memoryapp_memory"),
        _reference("memoryapp_memoryevidence", "conversation_id", "chat_conversation"),
        _reference("memoryapp_memoryevidence", "turn_id", "chat_turn"),
        _reference("memoryapp_memoryrecall", "memory_id", "memoryapp_memory"),
        _reference("memoryapp_memoryrecall", "conversation_id", "chat_conversation"),
        _reference("memoryapp_memoryrecall", "probe_turn_id", "chat_turn"),
        _reference("memoryapp_memoryrecall", "reply_turn_id", "chat_turn"),
        _reference("memoryapp_memoryevent", "memory_id", "memoryapp_memory"),
        _reference("memoryapp_memoryevent", "replaced_by_id", "memoryapp_memory"),
        _reference("memoryapp_memoryevent", "turn_id", "chat_turn"),
    ]
