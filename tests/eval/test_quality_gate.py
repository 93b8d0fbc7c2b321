"""The memory-quality gate: both labelled sets through the real remember/recall on the offline default.

On the suite (tuned on), CI fails when a memory leaks across users, a restated fact is stored
twice, the write gate lets more than 5% of invented facts through, or more than 5% of stored
facts were never stated by the user. On the unseen set (never tuned on), floors sit just under
the figures measured when it was written, so a regression on either set fails; a change that
raises a figure raises its floor with it.
"""

import json
import os
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings

from eval.calibration import calibrate
from eval.quality import USERNAME_PREFIX, run_suite
from eval.suite import CHATS, UNSEEN, load_suite
from memoryapp.thresholds import recall_floor, recall_gap, sensitive_floor, write_gate

OFFLINE = {
    "OPENAI_BASE_URL": None,
    "OPENAI_API_KEY": None,
    "LLM_ENABLED": False,
    "EMBEDDING_MODEL": "local-multilingual",  # the offline default
    "MEMORY_WRITE_GATE": None,
    "MEMORY_RECALL_FLOOR": None,
}


def _run(suite, name: str, django_db_blocker, *, labelled_store: bool = False):
    with django_db_blocker.unblock(), override_settings(**OFFLINE), transaction.atomic():
        result = run_suite(suite, name=name, labelled_store=labelled_store)
        transaction.set_rollback(True)
    return result


@pytest.fixture(scope="module")
def report(django_db_setup, django_db_blocker):
    """One run of the suite for the whole module (about 10 s), rolled back afterwards."""
    return _run(load_suite(), "suite", django_db_blocker)


@pytest.fixture(scope="module")
def unseen(django_db_setup, django_db_blocker):
    """One run of the unseen set for the whole module, rolled back afterwards."""
    return _run(load_suite(UNSEEN), "unseen", django_db_blocker)


@pytest.fixture(scope="module")
def chats(django_db_setup, django_db_blocker):
    """One run of the chat set for the whole module, rolled back afterwards."""
    return _run(load_suite(CHATS), "chats", django_db_blocker)


@pytest.fixture(scope="module")
def unseen_read_alone(django_db_setup, django_db_blocker):
    """The unseen set's labelled facts stored as written, then its probes: the read path alone."""
    return _run(load_suite(UNSEEN), "unseen-labels", django_db_blocker, labelled_store=True)


def test_the_suite_is_as_large_and_varied_as_promised():
    suite = load_suite()
    assert len(suite.users) >= 10
    assert suite.turn_count >= 150
    assert suite.probe_count >= 60
    assert sum(not p.expect for u in suite.users for p in u.probes) >= 10
    assert sum(not t.facts for u in suite.users for t in u.turns) >= 50  # small talk, questions, other people
    assert len(suite.invented) >= 50


def test_the_unseen_set_is_as_large_and_varied_as_promised_and_shares_nothing_with_the_suite():
    suite, unseen = load_suite(), load_suite(UNSEEN)
    turns = [t for u in unseen.users for t in u.turns]
    probes = [p for u in unseen.users for p in u.probes]
    assert len(unseen.users) >= 14 and len(turns) >= 150 and len(probes) >= 70
    assert 3 * sum(not p.expect for p in probes) >= len(probes)
    foreign = [t for t in turns if t.lang != "en"]
    assert len(foreign) >= 40 and len({t.lang for t in foreign}) >= 8
    kinds = Counter(t.kind for t in turns)
    for kind in ["instruction", "goal", "possession", "health", "family", "event", "move", "correction", "long"]:
        assert kinds[kind] >= 3, kind
    for kind in ["greeting", "thanks", "question", "hypothetical", "quoted", "code", "other-person", "forget"]:
        assert kinds[kind] >= 3, kind
    assert len(unseen.invented) >= 40 and {"answer", "assistant", "untranslated", "greeting"} <= {
        i.kind for i in unseen.invented
    }
    seen = {t.text for u in suite.users for t in (*u.turns, *u.past)} | {
        p.text for u in suite.users for p in (*u.probes, *u.recollections)
    }
    assert not seen & ({t.text for t in turns} | {p.text for p in probes})


def test_the_chat_set_is_written_as_people_chat_and_shares_nothing_with_the_other_sets():
    chats = load_suite(CHATS)
    turns = [t for u in chats.users for t in u.turns]
    probes = [p for u in chats.users for p in u.probes]
    assert len(chats.users) >= 10 and len(turns) >= 80 and len(probes) >= 50
    assert sum(not p.expect for p in probes) >= 10
    assert len({t.lang for t in turns if t.lang != "en"}) >= 5
    kinds = Counter(t.kind for t in turns)
    for kind in ["passing", "feeling", "listener", "we", "other-person"]:
        assert kinds[kind] >= 5, kind
    assert len(chats.invented) >= 15 and len(chats.misattributed) >= 10
    others = [load_suite(), load_suite(UNSEEN)]
    seen = {t.text for s in others for u in s.users for t in (*u.turns, *u.past)} | {
        p.text for s in others for u in s.users for p in (*u.probes, *u.recollections)
    }
    assert not seen & ({t.text for t in turns} | {p.text for p in probes})


@pytest.mark.django_db
def test_no_memory_leaks_across_users(report):
    assert report.leaked == 0


@pytest.mark.django_db
def test_restated_facts_make_no_twins(report):
    assert report.twins == 0, report.twin_texts


@pytest.mark.django_db
def test_the_write_gate_rejects_invented_facts(report):
    assert report.invented == len(load_suite().invented)
    assert report.invented_rejection >= 0.95, report.invented_accepted
    assert report.misattributed_rejection >= 0.97


@pytest.mark.django_db
def test_false_memories_stay_rare(report):
    assert report.live_memories > 50
    assert report.false_memory_rate <= 0.05, report.false_memory_texts


@pytest.mark.django_db
def test_the_offline_default_remembers_and_recalls_most_of_the_suite(report):
    # Floors just under the measured figures (docs/read-path.md): a regression alarm. Write
    # recall is 0.944 in English and 0.783 in all: the offline patterns find none of the Turkish,
    # Polish and Korean users' facts, and few of those said in passing in other languages (cases
    # for the model's English reading), and few of the sensitive users'. Read recall 0.833,
    # precision 0.866, right memory first 0.847 (the figure the floor is chosen by); no general
    # question, how-to question or statement given a memory, and no sensitive memory given off
    # its topic.
    assert report.write_precision >= 0.95
    assert report.summary()["by_language"]["en"]["write_recall"] >= 0.94
    assert report.write_recall >= 0.78
    assert report.read_recall >= 0.83
    assert report.read_precision >= 0.86
    assert report.right_first >= 0.84
    assert report.injection_rate == 0, report.injected
    assert report.statements_clean == 1.0
    assert report.sensitive_off_topic == 0, report.sensitive_given


@pytest.mark.django_db
def test_the_unseen_set_holds_its_floors(unseen):
    # Floors just under the figures measured with the grammar extractor and the multilingual
    # embedder (docs/read-path.md): 0.437 write recall, 1.000 precision, 0 false memories, every
    # invented and misattributed fact rejected; 0.319 right first, 0.356 read recall, 1/54 given
    # a memory though they need none, 17/18 first-person statements given nothing. Right first
    # is low because the offline extractor writes 35 of the 73 facts the probes need.
    assert unseen.leaked == 0 and unseen.twins == 0
    assert unseen.write_recall >= 0.43
    assert unseen.write_precision >= 0.97
    assert unseen.false_memory_rate <= 0.02
    assert unseen.invented_rejection >= 0.95
    assert unseen.misattributed_rejection >= 0.94
    assert unseen.right_first >= 0.31
    assert unseen.read_recall >= 0.35
    assert unseen.injection_rate <= 0.02, unseen.injected
    assert unseen.statements_clean >= 0.94
    assert unseen.sensitive_off_topic <= 1, unseen.sensitive_given


@pytest.mark.django_db
def test_the_chat_set_holds_its_floors(chats):
    # Floors just under the figures measured offline (docs/read-path.md): 0.455 write recall,
    # 1.000 precision, 0 false memories, every invented and misattributed fact rejected; 0.364
    # right first, 0.378 read recall, 0/26 injected, 14/14 statements given nothing.
    assert chats.leaked == 0 and chats.twins == 0
    assert chats.write_recall >= 0.38
    assert chats.write_precision >= 0.97
    assert chats.false_memory_rate <= 0.04
    assert chats.invented_rejection >= 0.94
    assert chats.misattributed_rejection >= 0.92
    assert chats.right_first >= 0.36
    assert chats.read_recall >= 0.37
    assert chats.injection_rate == 0, chats.injected
    assert chats.statements_clean == 1.0
    assert chats.sensitive_off_topic == 0, chats.sensitive_given


@pytest.mark.django_db
def test_the_read_path_alone_holds_its_floors_on_the_unseen_set(unseen_read_alone):
    report = unseen_read_alone
    # Every fact a probe expects was stored, so whatever is missed is the read path's miss.
    assert report.expected_recallable == report.expected_recalls == 73
    assert report.live_memories == 0 and report.stored == 0  # no write figures on a labelled store
    assert [row[0] for row in report.rows()] == [
        "read recall@5",
        "read precision@5",
        "right memory first",
        "no-memory probes injected",
        "no-memory statements given nothing",
        "sensitive memories off topic",
        "cross-user leakage",
    ]
    # Floors just under the figures measured (docs/read-path.md): 0.736 right first, 0.795 read
    # recall, 0/54 injected, 18/18 statements given nothing, 3 sensitive memories given to a
    # probe that does not expect them. Before keys (with the lead floor), on the same cases:
    # 0.819, 0.863, 17/54, 1/18, 7.
    assert report.leaked == 0
    assert report.right_first >= 0.73
    assert report.read_recall >= 0.79
    assert report.injection_rate == 0, report.injected
    assert report.statements_clean == 1.0
    assert report.sensitive_off_topic <= 3, report.sensitive_given


@pytest.mark.django_db
def test_the_unseen_set_is_reported_by_kind_and_language(unseen):
    by_language = unseen.by("lang")
    assert len(by_language) >= 9 and sum(g["turns"] for g in by_language.values()) == unseen.turns
    by_kind = unseen.by("kind", probes=False)
    assert sum(g["nothing_turns"] for g in by_kind.values()) == sum(
        not t.facts for u in load_suite(UNSEEN).users for t in u.turns
    )
    assert set(unseen.by("kind", turns=False)) == {
        "direct",
        "indirect",
        "instruction",
        "null",
        "null-shared-word",
        "sensitive",
        "statement",
    }


@pytest.mark.django_db
def test_settings_hold_the_calibrated_thresholds_for_the_local_model(report):
    calibration = calibrate(report)
    model = "use-multilingual-v3"
    assert (
        report.embedding_model,
        report.write_gate,
        report.recall_floor,
        report.sensitive_floor,
        report.recall_gap,
    ) == (model, write_gate(model), recall_floor(model), sensitive_floor(model), recall_gap(model))
    assert (calibration.gate, calibration.floor, calibration.sensitive, calibration.gap) == (
        report.write_gate,
        report.recall_floor,
        report.sensitive_floor,
        report.recall_gap,
    ), "run `manage.py evaluate_memory --calibrate` and update MEMORY_THRESHOLDS"


@pytest.mark.django_db(transaction=True)
def test_the_command_runs_on_a_throwaway_database_and_drops_it(capsys, settings):
    for name, value in OFFLINE.items():
        setattr(settings, name, value)
    database = connection.settings_dict["NAME"]

    call_command("evaluate_memory", "--json", "--details")

    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == {"suite", "unseen", "chats"}
    unseen = figures["unseen"]
    assert len(unseen["details"]["Expected facts not stored"]) == unseen["expected"] - unseen["expected_found"] > 0
    assert len(unseen["details"]["Stored facts no turn stated (false memories)"]) == unseen["false_memories"]
    assert figures["suite"]["leaked"] == 0 and figures["suite"]["twins"] == 0
    assert figures["suite"]["turns"] >= 150 and figures["suite"]["stored"] > 50
    assert figures["unseen"]["turns"] >= 150 and "ja" in figures["unseen"]["by_language"]
    assert connection.settings_dict["NAME"] == database
    assert not get_user_model().objects.filter(username__startswith=USERNAME_PREFIX).exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_database WHERE datname = %s", [f"memory_eval_{os.getpid()}"])
        assert cursor.fetchone() == (0,)
