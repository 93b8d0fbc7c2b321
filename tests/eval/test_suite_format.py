"""The labelled-set format: optional facts are matched only where no expected fact matches."""

import json
import re

import pytest

from eval.suite import SuiteError, load_suite


def _write(tmp_path, facts, turns, probes=()):
    path = tmp_path / "set.json"
    data = {"format": 1, "users": [{"user": "ana", "facts": facts, "turns": turns, "probes": list(probes)}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


FACTS = {
    "marathon": {"text": "The user is training for a marathon.", "match": ["marathon"]},
    "mornings": {"text": "The user runs most mornings.", "match": ["run morning"], "optional": True},
}
TURN = {"text": "I'm training for a marathon, so I run most mornings.", "facts": ["marathon"], "optional": ["mornings"]}


def test_an_optional_fact_takes_only_a_memory_no_expected_fact_matches(tmp_path):
    user = load_suite(_write(tmp_path, FACTS, [TURN])).users[0]

    assert user.classify("The user runs most mornings.") == "mornings"
    assert user.classify("The user runs a marathon most mornings.") == "marathon"
    assert user.classify("The user lives in Lyon.") is None
    assert user.turns[0].facts == ("marathon",) and user.turns[0].optional == ("mornings",)


@pytest.mark.parametrize(
    ("turns", "probes", "message"),
    [
        ([{"text": TURN["text"], "facts": ["marathon", "mornings"]}], [], "not expected facts: ['mornings']"),
        ([{"text": TURN["text"], "facts": ["marathon"], "optional": ["marathon"]}], [], "not optional facts"),
        ([TURN], [{"text": "When do I run?", "expect": ["mornings"]}], "probe 1: keys that are not expected"),
        ([{"text": TURN["text"], "facts": ["marathon"]}], [], "facts no turn states: ['mornings']"),
    ],
)
def test_an_optional_fact_is_never_expected_and_must_be_stated(tmp_path, turns, probes, message):
    with pytest.raises(SuiteError, match=re.escape(message)):
        load_suite(_write(tmp_path, FACTS, turns, probes))


def test_optional_must_be_a_boolean(tmp_path):
    facts = {**FACTS, "mornings": {**FACTS["mornings"], "optional": "yes"}}
    with pytest.raises(SuiteError, match="mornings: optional must be true or false"):
        load_suite(_write(tmp_path, facts, [TURN]))


def _with_history(tmp_path, history):
    path = _write(tmp_path, FACTS, [TURN])
    data = json.loads(path.read_text(encoding="utf-8"))
    data["users"][0]["history"] = history
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_history_section_names_events_that_its_probes_expect(tmp_path):
    history = {
        "turns": [{"text": "The physio said my left calf is strained.", "events": ["calf"]}],
        "probes": [
            {"text": "What did the physio say about my calf?", "expect": ["calf"], "kind": "recollection"},
            {"text": "When is my marathon?", "expect": ["marathon"]},
            {"text": "Went for an easy jog today.", "expect": [], "kind": "statement"},
        ],
    }
    user = load_suite(_with_history(tmp_path, history)).users[0]

    assert [(t.text, t.events) for t in user.past] == [("The physio said my left calf is strained.", ("calf",))]
    assert [p.expect for p in user.recollections] == [("calf",), ("marathon",), ()]
    assert user.probes == ()  # the history's probes are not the read path's


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ({"turns": [{"text": "x", "events": []}]}, "past turn 1: events must be a non-empty list"),
        ({"turns": [{"text": "x", "events": ["marathon"]}]}, "events that are also fact ids: ['marathon']"),
        ({"probes": [{"text": "x?", "expect": ["calf"]}]}, "recollection 1: keys that are not facts or past events"),
        ([], "history must be an object"),
    ],
)
def test_a_malformed_history_section_is_named(tmp_path, history, message):
    with pytest.raises(SuiteError, match=re.escape(message)):
        load_suite(_with_history(tmp_path, history))
