"""The approximate index of the chat history reference (chat.history.vector_index): one per
embedding model, made once its first turn is indexed, and the statement's answer through it the
same as through an exact sort."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection, transaction

from chat.history import _INDEXED, history_nearest, history_plan, vector_index, vector_index_name
from chat.services import conversation_create
from memoryapp.embeddings import get_embedder
from tests.factories import chat

pytestmark = pytest.mark.django_db(transaction=True)

SAID = [
    "The plumber said the boiler's pressure valve is failing and quoted 240 euros.",
    "We had dinner at Trattoria Lucca on Friday and the tiramisu was the best I've had.",
    "My sister's wedding is in Porto on the 14th of June.",
    "The vet said Pixel's limp is a sprained paw, two weeks of rest.",
    "I'm repainting the kitchen in sage green this weekend.",
    "The dentist booked my filling for the 3rd of March at 9am.",
]


def _index_definition(name: str) -> str | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        row = cursor.fetchone()
    return row[0] if row else None


def _dims() -> int:
    return int(get_embedder().embed(["dimension"]).shape[1])


def _drop_index() -> str:
    name = vector_index_name(get_embedder().name, _dims())
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {connection.ops.quote_name(name)}")
    _INDEXED.clear()
    return name


def test_a_models_first_indexed_turn_makes_its_index_partial_on_its_name(alice):
    embedder = get_embedder()
    name = _drop_index()
    chat(alice, SAID[0])
    definition = _index_definition(name)
    assert definition is not None and "USING hnsw" in definition
    assert f"vector({_dims()})" in definition and f"'{embedder.name}'" in definition
    assert vector_index_name("text-embedding-3-small", 1536) != vector_index_name("text-embedding-3-large", 1536)


def test_the_migration_makes_the_index_of_every_model_already_indexed(alice):
    chat(alice, SAID[0])
    name = _drop_index()
    assert _index_definition(name) is None
    migration = importlib.import_module("chat.migrations.0011_turn_vector_index")
    with connection.schema_editor() as editor:
        migration.make_indexes(None, editor)
    assert _index_definition(name) is not None
    assert vector_index(embedding_model=get_embedder().name, dims=_dims())  # found, not made twice


def test_through_the_index_the_statement_finds_what_an_exact_sort_finds(alice):
    for text in SAID:
        chat(alice, text)
    embedder = get_embedder()
    now = conversation_create(user=alice)
    probe = "What did the plumber say about the boiler?"
    vector = embedder.embed([probe])[0]
    asked = {"user": alice, "text": probe, "vector": vector, "embedding_model": embedder.name}
    found = {}
    for way, off in (("index", "enable_sort"), ("exact", "enable_indexscan")):
        with transaction.atomic():
            with connection.cursor() as cursor:  # make the other plan look too dear to the planner
                cursor.execute("SELECT set_config(%s, 'off', true)", [off])
            plan = history_plan(**asked, exclude_conversation_id=now.pk, k=6)
            assert (vector_index_name(embedder.name, _dims()) in plan) == (way == "index")
            found[way] = [
                (excerpt.turn.pk, excerpt.dense_rank)
                for excerpt in history_nearest(**asked, exclude_conversation_id=now.pk, k=6, min_sim=-1.0)
            ]
    assert found["index"] == found["exact"] and len(found["exact"]) == len(SAID)


def test_a_turn_with_no_word_to_search_is_looked_up_by_embedding_alone(alice):
    chat(alice, SAID[1])
    embedder = get_embedder()
    text = "and the of ?!"  # stop words only: no full-text query at all
    found = history_nearest(
        user=alice,
        text=text,
        vector=embedder.embed([text])[0],
        embedding_model=embedder.name,
        exclude_conversation_id=None,
        k=3,
        min_sim=-1.0,
    )
    assert [(excerpt.turn.content, excerpt.lexical_rank) for excerpt in found] == [(SAID[1], None)]
    assert found[0].dense_rank == 1
