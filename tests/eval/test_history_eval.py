"""The chat history reference's evaluation (eval/history.py) on a small set with a history section:
a recollection finds its event's turn, and a statement beside it is given nothing at any floor."""

import json

import pytest

from chat.history import QUESTION, STATEMENT
from eval.history import FLOORS, run_history
from eval.suite import load_suite

SET = {
    "format": 1,
    "users": [
        {
            "user": "ines",
            "facts": {"teacher": {"text": "The user is a primary school teacher.", "match": ["teacher"]}},
            "turns": [{"text": "I'm a primary school teacher.", "facts": ["teacher"]}],
            "probes": [],
            "history": {
                "turns": [{"text": "The parents' evening for my class is on the 9th at 6pm.", "events": ["evening"]}],
                "probes": [
                    {"text": "When is the parents' evening for my class?", "expect": ["evening"]},
                    {"text": "I spent the evening marking my class's spelling tests.", "expect": []},
                ],
            },
        }
    ],
}


@pytest.mark.django_db
def test_a_recollection_finds_its_event_and_a_statement_beside_it_gets_nothing(tmp_path):
    path = tmp_path / "set.json"
    path.write_text(json.dumps(SET), encoding="utf-8")

    report = run_history(load_suite(path), name="history-test")

    asked, told = report.probes
    assert (asked.form, asked.expects) == (QUESTION, True)
    assert asked.given(report.question_floor) == [True]  # the event's turn, and only it, over the floor
    assert told.form == STATEMENT and told.excerpts  # it has near turns, and is given none of them
    assert all(told.given(floor) == [] for floor in FLOORS)
    figures = report.at(report.floor, report.question_floor)
    assert figures["evidence found"] == 1.0 and figures["probes needing nothing given an excerpt"] == 0.0
    best = report.best()
    assert best["floor"] in FLOORS and best["question floor"] in FLOORS
    assert best["probes needing nothing given an excerpt"] <= 0.02
