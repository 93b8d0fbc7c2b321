"""With MEMORY_WARM_UP, the memory worker has the model read the write path's instructions when it
starts (memoryapp.write.extract.warm_up), so that a server's prompt cache holds them before the
first turn: every later extraction and reading begins with exactly what was read."""

import pytest

from chat.models import Turn
from chat.services import chat_reply, chat_user_turn, conversation_create
from core.llm import ModelUnavailable
from memoryapp.models import Memory
from memoryapp.parsed import parse_turn
from memoryapp.write.extract import english_reading, extraction_messages, warm_up
from tests.workers import finish, worker

NAPLES = "Vivo en Nápoles y trabajo como enfermera."


@pytest.mark.django_db
def test_the_model_reads_each_instruction_prefix_that_later_calls_begin_with(fake_llm, settings):
    settings.MEMORY_READ_IN_ENGLISH = True
    assert warm_up() >= 0
    extraction, reading = (request["body"] for request in fake_llm.chat_requests())
    assert extraction["max_tokens"] == reading["max_tokens"] == 1
    assert extraction["messages"][:-1] == extraction_messages("I live in Lisbon.", None)[:-1]

    fake_llm.reply("I live in Naples and I work as a nurse.")
    english_reading(parse_turn(NAPLES))
    later = fake_llm.chat_requests()[-1]["body"]["messages"]
    assert later[:-1] == reading["messages"][:-1]  # the whole reading prompt, but the turn
    assert later[-1]["content"] != reading["messages"][-1]["content"]


@pytest.mark.django_db
def test_without_the_reading_only_the_extraction_is_read(fake_llm, settings):
    settings.MEMORY_READ_IN_ENGLISH = False
    warm_up()
    assert len(fake_llm.chat_requests()) == 1


@pytest.mark.django_db
def test_a_failing_endpoint_is_a_model_failure(fake_llm, settings):
    settings.LLM_MAX_RETRIES = 0
    fake_llm.fail(503)
    with pytest.raises(ModelUnavailable, match="instructions"):
        warm_up()


@pytest.mark.django_db(transaction=True)
def test_the_worker_reads_them_before_its_first_write_and_a_failure_loses_no_write(alice, worker_env, fake_llm):
    worker_env.update(
        OPENAI_BASE_URL=fake_llm.base_url,
        OPENAI_API_KEY="test-key",
        MEMORY_WARM_UP="1",
        MEMORY_GRAMMAR_FIRST="0",
        MEMORY_READ_IN_ENGLISH="0",
    )
    fake_llm.reply("Noted.")  # the reply, in this process
    fake_llm.fail(503)  # the worker's warm-up
    fake_llm.facts("The user lives in Lisbon.")  # its extraction
    turn = chat_user_turn(user=alice, conversation=conversation_create(user=alice), content="I live in Lisbon.")
    assert chat_reply(user=alice, user_turn=turn).error is None
    fake_llm.requests.clear()

    output = finish(worker(worker_env, "--batch"))

    warm, extraction = (request["body"] for request in fake_llm.chat_requests())
    assert warm["max_tokens"] == 1
    assert extraction["messages"][:-1] == warm["messages"][:-1]
    assert "could not read the write path's instructions ahead" in output
    turn.refresh_from_db()
    assert turn.memory_state == Turn.MemoryState.DONE
    assert list(Memory.objects.filter(user=alice).values_list("text", flat=True)) == ["The user lives in Lisbon."]
