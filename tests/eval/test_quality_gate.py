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
from memoryapp.thresholds import lead_floor, recall_floor, write_gate

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
    seen = {t.text for u in suite.users for t in u.turns} | {p.text for u in suite.users for p in u.probes}
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
    seen = {t.text for s in others for u in s.users for t in u.turns} | {
        p.text for s in others for u in s.users for p in u.probes
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
    # Floors just under the measured figures (README "Memory quality"): a regression alarm.
    # Precision is 0.813 since the recall floor went from 0.19 to the 0.14 the calibration picks
    # once turns in other languages are decided before the floor (memoryapp/need.py): the floor
    # no longer has to keep memories out of turns that need none, only trims the tail.
    # Write recall is 0.864: of the 6 facts of the Russian and Portuguese two-clause turns
    # (`dmitri`, `luana`) the offline patterns find 1, of the 9 facts of the Turkish, Polish
    # and Korean users (`aylin`, `marta`, `minjun`, cases for the model's English reading) none,
    # and of the 6 of `rosa`'s jobs in a place 3 (not the Spanish turn's 2, nor the place of the
    # job the parse words with its aside); it was 0.965 without them.
    assert report.write_precision >= 0.95
    assert report.write_recall >= 0.86
    assert report.read_recall >= 0.92
    assert report.read_precision >= 0.80
    assert report.right_first >= 0.92
    assert report.injection_rate <= 0.05


@pytest.mark.django_db
def test_the_unseen_set_holds_its_floors(unseen):
    # Floors just under the figures measured with the grammar extractor and the multilingual
    # embedder (README "Memory quality", "The embedder"): 0.441 write recall, 0.982 precision,
    # 0 false memories (0/57), 0.957 invented rejected (0.761 before the gate read requests,
    # pleasantries, quotations, raised claims and relations in other languages), 18/18
    # misattributed rejected (12/18 before), 0.415 right first, 0.439 read recall, 0/34
    # injected (0.600 read precision, 0.675 with the recall floor at 0.19). all-MiniLM-L6-v2 gave
    # 0.354 right first and 1/34 injected on the same memories. Before the set's optional facts
    # (eval/README.md, "Adjudication"): 0.879 precision, 0.103 false memories.
    assert unseen.leaked == 0 and unseen.twins == 0
    assert unseen.write_recall >= 0.43
    assert unseen.write_precision >= 0.97
    assert unseen.false_memory_rate <= 0.02
    assert unseen.invented_rejection >= 0.95
    assert unseen.misattributed_rejection >= 0.94
    assert unseen.right_first >= 0.40
    assert unseen.read_recall >= 0.43
    assert unseen.injection_rate <= 0.03


@pytest.mark.django_db
def test_the_chat_set_holds_its_floors(chats):
    # Floors just under the figures measured offline (README "Memory quality"): 0.387 write
    # recall, 1.000 precision, 0 false memories (0/25), 0.941 invented rejected, 13/14 misattributed
    # rejected (10/14 before the gate read relations in other languages), 0.381 right first,
    # 0.372 read recall, 1/11 injected (before the set's optional facts: 0.828 precision, 0.172
    # false memories). When the set was written: 0.371, 0.793, 0.207, 0.941, 0.357, 0.349.
    # Since the tortoise named in passing is kept ("Gus, my tortoise, ..."): 0.419 write recall
    # and 2/11 injected, the second "How do I clean a cast iron pan?" getting that memory at 0.064,
    # over the lead floor a question in the first person is given.
    assert chats.leaked == 0 and chats.twins == 0
    assert chats.write_recall >= 0.38
    assert chats.write_precision >= 0.97
    assert chats.false_memory_rate <= 0.04
    assert chats.invented_rejection >= 0.94
    assert chats.misattributed_rejection >= 0.92
    assert chats.right_first >= 0.37
    assert chats.read_recall >= 0.36
    assert chats.injection_rate <= 0.19


@pytest.mark.django_db
def test_the_read_path_alone_holds_its_floors_on_the_unseen_set(unseen_read_alone):
    report = unseen_read_alone
    # Every fact a probe expects was stored, so whatever is missed is the read path's miss.
    assert report.expected_recallable == report.expected_recalls == 66
    assert report.live_memories == 0 and report.stored == 0  # no write figures on a labelled store
    assert [row[0] for row in report.rows()] == [
        "read recall@5",
        "read precision@5",
        "right memory first",
        "no-memory probes injected",
        "cross-user leakage",
    ]
    # Floors just under the figures measured (README "Memory quality", "The embedder"): 0.831
    # right first, 0.879 read recall, 0/34 injected. Before turns in other languages were decided
    # on their embedding (memoryapp/need.py), with the recall floor at 0.19: 0.785, 0.788 and
    # 4/34, all four in other languages.
    assert report.leaked == 0
    assert report.right_first >= 0.82
    assert report.read_recall >= 0.86
    assert report.injection_rate <= 0.03


@pytest.mark.django_db
def test_the_unseen_set_is_reported_by_kind_and_language(unseen):
    by_language = unseen.by("lang")
    assert len(by_language) >= 9 and sum(g["turns"] for g in by_language.values()) == unseen.turns
    by_kind = unseen.by("kind", probes=False)
    assert sum(g["nothing_turns"] for g in by_kind.values()) == sum(
        not t.facts for u in load_suite(UNSEEN).users for t in u.turns
    )
    assert set(unseen.by("kind", turns=False)) == {"direct", "indirect", "instruction", "null", "null-shared-word"}


@pytest.mark.django_db
def test_settings_hold_the_calibrated_thresholds_for_the_local_model(report):
    calibration = calibrate(report)
    model = "use-multilingual-v3"
    assert (report.embedding_model, report.write_gate, report.recall_floor, report.lead_floor) == (
        model,
        write_gate(model),
        recall_floor(model),
        lead_floor(model),
    )
    assert (calibration.gate, calibration.floor, calibration.lead) == (
        report.write_gate,
        report.recall_floor,
        report.lead_floor,
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
