"""Words too common to tell a heavy user's turns apart (chat.history, a common-terms query): they
rank the turns matched by the probe's other words and match none themselves, unless every word
of the probe is common, when a turn must have them all. The thresholds are lowered here so that a
small table has common words; at their defaults a small table has none."""

from __future__ import annotations

import pytest
from django.db import connection

from chat.history import history_nearest, turn_index
from chat.models import Turn
from chat.services import conversation_create, turn_append
from memoryapp.embeddings import get_embedder

pytestmark = pytest.mark.django_db


def _said(user, texts: list[str]) -> None:
    """The user's turns, indexed as the memory worker indexes them, then the table analyzed."""
    embedder = get_embedder()
    conversation = conversation_create(user=user)
    for text, vector in zip(texts, embedder.embed(texts), strict=True):
        turn = turn_append(user=user, conversation=conversation, role=Turn.Role.USER, content=text)
        Turn.objects.filter(pk=turn.pk, user=user).update(memory_state=Turn.MemoryState.DONE)
        assert turn_index(user=user, turn=turn, vector=vector, embedding_model=embedder.name, config="english")
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Turn._meta.db_table}")


def _weekends() -> list[str]:
    places = "garden beach cinema museum market lake forest harbour stadium library".split()
    said = [f"This weekend we went to the {place}." for place in places]
    said += [f"Last weekend the garden party at the {place} was fun." for place in places[1:5]]
    return said + ["The plumber came about the boiler.", "The boiler broke again over the weekend."]


def _matched(user, probe: str) -> set[str]:
    """The past turns the probe's full-text query matched (a lexical rank), by their words."""
    found = history_nearest(
        user=user,
        text=probe,
        vector=get_embedder().embed([probe])[0],
        embedding_model=get_embedder().name,
        exclude_conversation_id=None,
        k=30,
        min_sim=-1.0,
    )
    return {excerpt.turn.content for excerpt in found if excerpt.lexical_rank is not None}


@pytest.fixture
def lowered(settings):
    settings.CHAT_HISTORY_COMMON_SHARE = 0.2
    settings.CHAT_HISTORY_COMMON_TURNS = 5


def test_a_common_word_ranks_what_the_uncommon_ones_match(alice, lowered):
    _said(alice, _weekends())
    assert _matched(alice, "What did I say about the boiler on the weekend?") == {
        "The plumber came about the boiler.",
        "The boiler broke again over the weekend.",
    }


def test_when_every_word_is_common_a_turn_must_have_them_all(alice, lowered):
    _said(alice, _weekends())
    matched = _matched(alice, "Which weekend did we spend in the garden?")
    assert matched == {said for said in _weekends() if "weekend" in said and "garden" in said}
    assert len(matched) == 5


def test_at_the_default_thresholds_a_small_table_has_no_common_word(alice):
    _said(alice, _weekends())
    assert _matched(alice, "What did I say about the boiler on the weekend?") == set(_weekends())
