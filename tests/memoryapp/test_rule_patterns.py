"""Every pattern of the rule-based extractor (memoryapp/write/rules.toml) on the examples it names:
each sentence it must match gives its fact, by the rule alone and through the whole extractor;
each sentence it must miss gives nothing from it."""

import pytest

from memoryapp.write.rules import extract_facts_by_rules, load, rules

MATCHES = [
    pytest.param(rule, sentence, fact, id=f"{rule.kind}: {sentence}")
    for rule in rules()
    for sentence, fact in rule.matches
]
MISSES = [pytest.param(rule, sentence, id=f"{rule.kind}: {sentence}") for rule in rules() for sentence in rule.misses]


@pytest.mark.parametrize(("rule", "sentence", "fact"), MATCHES)
def test_the_rule_states_its_fact_from_each_sentence_it_must_match(rule, sentence, fact):
    assert rule.facts(sentence)[:1] == [fact]
    assert fact in extract_facts_by_rules(sentence)


@pytest.mark.parametrize(("rule", "sentence"), MISSES)
def test_the_rule_states_nothing_from_each_sentence_it_must_miss(rule, sentence):
    assert rule.facts(sentence) == []


def test_every_rule_says_what_it_recognises_and_has_examples_of_both_kinds():
    assert len(rules()) >= 30
    assert all(rule.kind and rule.matches and rule.misses for rule in rules())
    assert len({rule.kind for rule in rules()}) == len(rules())


def test_a_pattern_that_names_a_part_there_is_not_is_refused(tmp_path):
    path = tmp_path / "rules.toml"
    path.write_text(
        '[parts]\nvalue = "(?P<v>\\\\w+)"\n\n[[rule]]\nkind = "a home"\npattern = "I live in $valeu"\n'
        'template = "The user lives in {v}."\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"\$valeu"):
        load(path)
    path.write_text(path.read_text(encoding="utf-8").replace("$valeu", "$value"), encoding="utf-8")
    (rule,) = load(path)
    assert rule.facts("I live in Oslo") == ["The user lives in Oslo."]
