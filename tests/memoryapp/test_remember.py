import json
import re

import pytest
from django.db import connection

from chat.models import Turn
from chat.services import turn_append
from core.llm import ModelUnavailable
from memoryapp import thresholds
from memoryapp.hashing import content_hash
from memoryapp.models import Memory, MemoryEvidence
from memoryapp.parsed import parse_turn
from memoryapp.services import memory_soft_delete
from memoryapp.write import remember
from memoryapp.write.extract import EXTRACT_EXAMPLES, EXTRACT_MAX_TOKENS, ExtractionUnusable
from memoryapp.write.gate import gate_facts
from tests.factories import user_turn

pytestmark = pytest.mark.django_db

PRIYA = "Call me Priya, and I'm always in UTC."


def live(user):
    return Memory.objects.filter(user=user, deleted_at__isnull=True)


def test_priya_turn_writes_facts_with_provenance(alice):
    turn = user_turn(alice, PRIYA)

    written = remember(alice, turn)

    assert written.stored == 2 and written.refused == ()
    rows = {m.text: m for m in live(alice)}
    assert set(rows) == set(written.kept) == {"The user's name is Priya.", "The user's timezone is UTC."}
    for memory in rows.values():
        assert memory.source_conversation_id == turn.conversation_id
        assert memory.source_turn_id == turn.pk
        assert memory.embedding_model == "use-multilingual-v3"
        assert len(memory.embedding) == 512
        assert memory.content_hash == content_hash(memory.text)
        evidence = MemoryEvidence.objects.get(memory=memory)
        assert (evidence.turn_id, evidence.created) == (turn.pk, True)
        assert evidence.gate_similarity >= 0.4


def test_a_stored_memory_stays_in_one_row_so_the_exact_scan_never_reads_the_toast_table(alice):
    remember(alice, user_turn(alice, PRIYA))
    assert Memory.objects.filter(user=alice).count() == 2  # two 512-dimension vectors, 2,056 bytes each
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = %s::regclass", [Memory._meta.db_table]
        )
        (toast,) = cursor.fetchone()
        cursor.execute(f"SELECT count(*) FROM {toast}")  # noqa: S608 - a name PostgreSQL gave
        assert cursor.fetchone() == (0,)  # neither the vectors nor the texts and hashes were moved out of line


def test_restated_fact_refreshes_last_seen_instead_of_adding_a_twin(alice):
    first = user_turn(alice, PRIYA)
    remember(alice, first)
    before = {m.text: m.last_seen for m in live(alice)}

    again = user_turn(alice, "Call me Priya -  and I'm always in UTC!")
    assert remember(alice, again).stored == 2

    assert live(alice).count() == 2
    for memory in live(alice):
        assert memory.last_seen > before[memory.text]
        assert memory.times_seen == 2
        assert memory.source_turn_id == first.pk  # provenance keeps the first source
        assert list(memory.evidence.order_by("id").values_list("turn_id", "created")) == [
            (first.pk, True),
            (again.pk, False),
        ]


def test_running_remember_twice_on_one_turn_counts_it_once(alice):
    turn = user_turn(alice, PRIYA)
    remember(alice, turn)
    remember(alice, turn)
    assert [m.times_seen for m in live(alice)] == [1, 1]
    assert MemoryEvidence.objects.filter(user=alice).count() == 2


def test_restatement_after_delete_is_a_new_live_row_and_keeps_the_deleted_one(alice):
    remember(alice, user_turn(alice, "I'm vegetarian."))
    original = live(alice).get()
    memory_soft_delete(user=alice, memory_id=original.pk)
    assert not live(alice).exists()

    remember(alice, user_turn(alice, "I'm vegetarian."))

    rows = Memory.objects.filter(user=alice).order_by("id")
    assert [(m.pk == original.pk, m.text, m.deleted_at is None) for m in rows] == [
        (True, "The user is vegetarian.", False),
        (False, "The user is vegetarian.", True),
    ]


def test_invented_fact_is_rejected_by_the_gate(alice, fake_llm):
    fake_llm.facts("The user's name is Dr. Alvarez.")
    assert remember(alice, user_turn(alice, PRIYA)).stored == 0
    assert not Memory.objects.filter(user=alice).exists()


def test_gate_keeps_the_true_fact_and_drops_the_invented_one(alice, fake_llm):
    fake_llm.facts("Priya prefers UTC.", "The user's name is Dr. Alvarez.")
    assert remember(alice, user_turn(alice, PRIYA)).stored == 1
    assert list(live(alice).values_list("text", flat=True)) == ["Priya prefers UTC."]


def test_a_child_named_by_age_passes_the_gate_on_the_turns_own_words_alone():
    # The turn is about a rainy day, so the fact scores low against it; its words say it.
    turn = "What games can my six-year-old play on a rainy day?"
    _, kept, rejected = gate_facts(parse_turn(turn), ["The user has a six-year-old child."])
    assert [fact.text for fact in kept] == ["The user has a six-year-old child."]
    assert kept[0].similarity < thresholds.write_gate("use-multilingual-v3")
    # The same words about a thing, or someone else's child, support no child of the user's.
    for turn in ("My 12 year old phone still works fine, why would I upgrade?", "My sister's 4 year old bites."):
        number = re.search(r"\d+", turn).group()
        _, kept, rejected = gate_facts(parse_turn(turn), [f"The user has a {number}-year-old child."])
        assert (kept, len(rejected)) == ([], 1)


def test_extraction_request_carries_the_turn_and_the_instructions(alice, fake_llm):
    fake_llm.facts("Priya prefers UTC.")
    remember(alice, user_turn(alice, PRIYA))
    (request,) = fake_llm.chat_requests()
    body = request["body"]
    messages = body["messages"]
    assert messages[0]["role"] == "system" and "at most 2" in messages[0]["content"]
    # worked examples as earlier exchanges, then the turn itself, marked as data and dated
    examples = messages[1:-1]
    assert len(examples) == 2 * len(EXTRACT_EXAMPLES) and {m["role"] for m in examples} == {"user", "assistant"}
    assert all("facts" in json.loads(m["content"]) for m in examples if m["role"] == "assistant")
    assert messages[-1]["role"] == "user"
    assert re.fullmatch(
        r'<message sent="\w+ \d+ \w+ \d{4}">' + re.escape(PRIYA) + "</message>", messages[-1]["content"]
    )
    # a bounded, schema-shaped answer: an object with at most 2 strings
    assert body["max_tokens"] == EXTRACT_MAX_TOKENS and body["temperature"] == 0
    schema = body["response_format"]["json_schema"]["schema"]
    assert body["response_format"]["type"] == "json_schema"
    assert schema["properties"]["facts"]["maxItems"] == 2 and schema["required"] == ["facts"]


def test_an_answer_cut_off_at_the_token_limit_stores_nothing_and_is_unusable(alice, fake_llm):
    fake_llm.cut_off('{"facts": ["The user lives in Lisbon.", "The user lives in Lisbon.", "The user')
    with pytest.raises(ExtractionUnusable):
        remember(alice, user_turn(alice, "I live in Lisbon."))
    assert not Memory.objects.filter(user=alice).exists()


def test_at_most_two_facts_are_kept_per_turn(alice, fake_llm):
    turn = "I live in Lisbon, I work at Acme as a data engineer, and I'm vegetarian."
    fake_llm.facts("The user lives in Lisbon.", "The user works at Acme.", "The user is vegetarian.")
    assert remember(alice, user_turn(alice, turn)).stored == 2
    assert live(alice).count() == 2


@pytest.mark.parametrize(
    "turn",
    [
        "hi there, how are you?",
        "Good morning!",
        "thanks, that was helpful",
        "What timezone am I in?",
        "Can you summarise this article for me?",
        "You are a great assistant.",
        "Your answers are too long.",
        "My colleague Dr. Alvarez prefers tea.",
        "My sister lives in Berlin.",
        "I would love to visit Japan someday.",
        "ok",
        "   ",
    ],
)
def test_small_talk_questions_and_other_people_write_nothing(alice, turn):
    assert remember(alice, user_turn(alice, turn)).stored == 0
    assert not Memory.objects.filter(user=alice).exists()


def test_assistant_turns_are_never_a_source(alice):
    turn = user_turn(alice, "hello")
    reply = turn_append(user=alice, conversation=turn.conversation, role=Turn.Role.ASSISTANT, content=PRIYA)
    assert remember(alice, reply).stored == 0
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    "content",
    [
        "this is not json",
        '{"facts": "The user lives in Lisbon."}',
        "null",
        "",
        json.dumps({"facts": ["The user lives in Lisbon."] * 50}),
    ],
    ids=["prose", "string", "null", "empty", "fifty-facts"],
)
def test_an_answer_that_is_not_a_list_of_facts_is_unusable_and_stores_nothing(alice, fake_llm, content):
    fake_llm.reply(content)
    with pytest.raises(ExtractionUnusable):
        remember(alice, user_turn(alice, "I live in Lisbon."))
    assert not Memory.objects.exists()


@pytest.mark.parametrize(
    "content",
    [
        '{"facts": [{"text": "The user lives in Lisbon."}]}',
        "[1, 2, 3]",
        json.dumps({"facts": ["x" * 10_000]}),
    ],
    ids=["objects", "numbers", "ten-kb-fact"],
)
def test_unusable_items_of_a_list_are_dropped_without_an_exception(alice, fake_llm, content):
    fake_llm.reply(content)
    assert remember(alice, user_turn(alice, "I live in Lisbon.")).stored == 0
    assert not Memory.objects.exists()


def test_control_characters_are_stripped_from_facts(alice, fake_llm):
    fake_llm.facts("The user lives\x00 in\x1b Lisbon.")
    assert remember(alice, user_turn(alice, "I live in Lisbon.")).stored == 1
    assert live(alice).get().text == "The user lives in Lisbon."


def test_model_failure_raises_and_writes_nothing(alice, fake_llm):
    fake_llm.fail(500)
    turn = user_turn(alice, "I live in Lisbon.")
    with pytest.raises(ModelUnavailable):
        remember(alice, turn)
    assert not Memory.objects.exists()
    # the turn itself is untouched and the write can be retried
    fake_llm.facts("The user lives in Lisbon.")
    assert remember(alice, turn).stored == 1


def test_a_turn_of_another_user_is_refused(alice, bob):
    turn = user_turn(alice, PRIYA)
    with pytest.raises(PermissionError):
        remember(bob, turn)
    assert not Memory.objects.exists()


def test_content_hash_ignores_case_spacing_width_and_trailing_punctuation():
    assert content_hash("The user's name is Priya.") == content_hash("  the USER'S name   is priya!! ")
    assert content_hash("The user uses ＭａｃＢｏｏｋ.") == content_hash("the user uses macbook")
    assert content_hash("The user lives in Lisbon.") != content_hash("The user lives in Porto.")


def fixed_extractor(text):
    """A stand-in extractor named by MEMORY_EXTRACTOR in the test below."""
    return ["The user likes fixed extractors.", 42, "x" * 10_000]


def test_a_custom_extractor_named_in_settings_is_used_and_its_output_cleaned(alice, settings):
    settings.MEMORY_EXTRACTOR = "tests.memoryapp.test_remember.fixed_extractor"
    assert remember(alice, user_turn(alice, "I like fixed extractors.")).stored == 1
    assert live(alice).get().text == "The user likes fixed extractors."
