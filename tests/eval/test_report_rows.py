"""The evaluation's table: false memories of English turns and of other languages apart, and,
with a model configured, the seconds each turn's write took."""

from eval.quality import Report, TurnOutcome


def _turn(lang: str, *, written: int, false: int, seconds: float) -> TurnOutcome:
    return TurnOutcome(
        kind="plain",
        lang=lang,
        expected=1,
        found=1,
        written=written,
        correct=written - false,
        false=false,
        seconds=seconds,
    )


def _report() -> Report:
    report = Report(
        embedding_model="local",
        extractor="test",
        write_gate=0.4,
        recall_floor=0.3,
        sensitive_floor=0.3,
        recall_gap=0.1,
        k=5,
        users=1,
        turns=4,
        probes=0,
    )
    report.turn_outcomes = [
        _turn("en", written=2, false=0, seconds=0.5),
        _turn("en", written=2, false=1, seconds=1.5),
        _turn("de", written=1, false=1, seconds=4.0),
        _turn("ja", written=3, false=0, seconds=2.0),
    ]
    return report


def test_false_memories_are_reported_for_english_and_other_languages_apart(settings):
    settings.LLM_ENABLED = False
    rows = {name: (value, counts) for name, value, counts in _report().rows()}
    assert rows["false-memory rate, English"] == ("0.250", "1/4 written")
    assert rows["false-memory rate, other languages"] == ("0.250", "1/4 written")
    assert not any(name.startswith("write seconds") for name in rows)  # offline: milliseconds, noise


def test_with_a_model_the_write_time_per_turn_is_reported_by_language(settings):
    settings.LLM_ENABLED = True
    rows = {name: (value, counts) for name, value, counts in _report().rows()}
    assert rows["write seconds per turn, English"] == ("1.45", "p95 of 2 turns; p50 1.00, max 1.50")
    assert rows["write seconds per turn, other languages"] == ("3.90", "p95 of 2 turns; p50 3.00, max 4.00")
