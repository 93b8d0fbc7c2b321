"""The LongMemEval runner on questions written in its format (not from the data set)."""

import json

import pytest

from eval.longmemeval import load_questions, run_longmemeval, sample


def _question(qid: str, question: str, sessions: list[list[tuple[str, str, bool]]], qtype: str) -> dict:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": "",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_dates": [f"2023/05/{10 + i:02d} (Wed) 09:30" for i in range(len(sessions))],
        "haystack_session_ids": [f"s{i}" for i in range(len(sessions))],
        "haystack_sessions": [
            [{"role": role, "content": text, "has_answer": evidence} for role, text, evidence in session]
            for session in sessions
        ],
    }


PLUMBER = _question(
    "q-plumber",
    "What did the plumber say was wrong with my boiler?",
    [
        [("user", "Can you help me plan a week of vegetarian dinners?", False), ("assistant", "Sure.", False)],
        [
            ("user", "The plumber came today and said the boiler's pressure relief valve is failing.", True),
            ("assistant", "That is a common fault.", False),
        ],
        [("user", "What's a good book about the history of Rome?", False)],
    ],
    "single-session-user",
)
ASSISTANT_ONLY = _question(
    "q-assistant",
    "What was the second recipe you gave me?",
    [[("user", "Give me two soup recipes.", False), ("assistant", "Leek soup, then lentil soup.", True)]],
    "single-session-assistant",
)


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "questions").mkdir()
    for q in (PLUMBER, ASSISTANT_ONLY):
        (tmp_path / "questions" / f"1_{q['question_id']}.json").write_text(json.dumps(q))
    return tmp_path / "questions"


def test_a_folder_and_a_list_load_alike_and_questions_without_the_users_evidence_are_left_out(folder, tmp_path):
    listed = tmp_path / "all.json"
    listed.write_text(json.dumps([PLUMBER, ASSISTANT_ONLY]))
    by_id = lambda questions: sorted(questions, key=lambda q: q["question_id"])  # noqa: E731
    assert by_id(load_questions(folder)) == by_id(load_questions(listed)) == by_id([PLUMBER, ASSISTANT_ONLY])
    assert [q["question_id"] for q in sample(load_questions(folder), None)] == ["q-plumber"]


@pytest.mark.django_db
def test_the_evidence_turn_is_found_among_past_turns_and_by_the_combined_read_path(folder, settings):
    settings.LLM_ENABLED = False
    report = run_longmemeval(folder)
    assert (report.questions, report.turns) == (1, 3)
    figures = report.types["single-session-user"]
    assert figures.found["past turns"] == figures.found["combined"] == figures.found["nearest turns, no floor"] == 1
    assert report.rows()[-1]["type"] == "all" and report.rows()[-1]["combined"] == 1.0
