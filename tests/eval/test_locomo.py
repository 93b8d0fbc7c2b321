"""The LoCoMo runner on a small file in LoCoMo's format (eval/locomo-mini.json)."""

from pathlib import Path

import pytest
from django.conf import settings

from eval.locomo import as_asked_by, locomo_evidence_ids, run_locomo

MINI = Path(settings.BASE_DIR) / "eval" / "locomo-mini.json"


def test_malformed_evidence_ids_are_split_or_skipped():
    assert locomo_evidence_ids(["D8:6; D9:17", "D1:3", "nothing", 7, "D1:3"]) == ["D8:6", "D9:17", "D1:3"]
    assert locomo_evidence_ids("D2:1") == ["D2:1"]


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("When did Caroline go to the support group?", "When did I go to the support group?"),
        ("What is Caroline's job?", "What is my job?"),
        ("Why did Caroline paint her kitchen?", "Why did I paint my kitchen?"),
        ("How does Caroline feel about adoption?", "How do I feel about adoption?"),
        ("What did Melanie tell Caroline about her dog?", "What did Melanie tell me about her dog?"),
        ("When is Caroline moving?", "When am I moving?"),
    ],
)
def test_a_question_is_asked_by_the_speaker_it_is_about(question, asked):
    assert as_asked_by(question, "Caroline", "Melanie") == asked


@pytest.mark.django_db
def test_each_speaker_is_a_user_and_evidence_is_found_in_the_provenance_of_recalled_memories(settings):
    settings.LLM_ENABLED = False
    settings.EMBEDDING_MODEL = "local"

    report = run_locomo(MINI)

    assert (report.samples, report.turns, report.skipped_questions) == (1, 9, 0)
    assert report.memories >= 6
    single_hop = report.categories[4]
    assert (single_hop.questions, single_hop.evidence) == (4, 4)
    # Home, job, allergy and the dog ("I have two kids and a dog named Rufus") are stored and
    # recalled with their turn as provenance.
    assert single_hop.found[10] == 4
    assert single_hop.found[5] == 4
    assert single_hop.stored == 4 and single_hop.stored_share == 1.0
    assert report.categories[1].evidence == 2  # "D1:2; D2:1" counts as two evidence turns
    # Caroline is asked about Melanie's dog: nothing of Melanie's may come back for her.
    assert report.categories[5].questions == 1
    assert report.categories[5].other_speaker_recalled == 0
    assert report.categories[5].found[10] == 0
    assert report.categories[5].stored == 0  # the dog is in Melanie's store, not Caroline's
    # The combined read path takes memories and past turns in turn: its first 10 hold the first 5
    # memories, so it finds at least what they found; Melanie's turns are never Caroline's.
    assert single_hop.found_combined[10] == 4
    assert report.categories[5].found_history[10] == report.categories[5].found_combined[10] == 0


@pytest.mark.django_db(transaction=True)
def test_a_failing_extraction_costs_its_turn_not_the_run(settings, fake_llm):
    settings.EMBEDDING_MODEL = "local"
    fake_llm.fail(500, times=2)  # the first two turns' extractions fail
    fake_llm.reply("Sure! Here are the facts you asked for")  # the third's answer is unusable

    report = run_locomo(MINI)

    assert report.turns == 9 and report.extraction_failures == 3
    assert report.categories[4].questions == 4  # the questions were still asked
