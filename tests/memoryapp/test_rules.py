"""The offline extractor: what it states, and what it must never state about the user."""

import pytest

from memoryapp.write.rules import extract_facts_by_rules


@pytest.mark.parametrize(
    ("turn", "facts"),
    [
        ("Actually I moved to Porto last month.", ["The user lives in Porto."]),
        ("Update: I relocated to Austin in June.", ["The user lives in Austin."]),
        ("I use Arch Linux on all my machines.", ["The user uses Arch Linux on all their machines."]),
        ("Hey there, I'm Marcus.", ["The user's name is Marcus."]),
        ("im a student", ["The user is a student."]),
        ("I eat halal only.", ["The user eats halal."]),
        ("I play the piano on weekends.", ["The user plays the piano."]),
        ("I play tennis on Sundays.", ["The user plays tennis."]),
        ("I cycle to work every day, even in winter.", ["The user cycles to work."]),
        ("I work night shifts most weeks.", ["The user works night shifts."]),
        ("My laptop is a ThinkPad.", ["The user's laptop is a ThinkPad."]),
        ("I do all my work on a MacBook Pro.", ["The user works on a MacBook Pro."]),
        ("Ich wohne in Berlin.", ["The user lives in Berlin."]),
        ("J'habite à Marseille.", ["The user lives in Marseille."]),
        ("Olá, o meu nome é Inês.", ["The user's name is Inês."]),
    ],
)
def test_self_disclosures_become_third_person_facts(turn, facts):
    assert extract_facts_by_rules(turn) == facts


def test_a_place_named_in_another_language_gets_its_english_name_so_restatements_are_one_fact():
    assert extract_facts_by_rules("Abito a Milano.") == extract_facts_by_rules("I live in Milan.")
    assert extract_facts_by_rules("Moro em Lisboa.") == ["The user lives in Lisbon."]


@pytest.mark.parametrize(
    "turn",
    [
        "My sister lives in Berlin.",
        "My friend Takeshi lives in Kyoto and works as a chef.",
        "Linus Torvalds lives in Portland.",
        "If I were rich I'd live in Monaco.",
        "If I ever moved abroad, I think I'd pick Lisbon.",
        "Pretend you are a pirate.",
        "Please, no emoji in my emails, I really dislike them.",
        "We live in Leeds.",
        "I play games all day.",
        "My husband is vegan and works as a nurse.",
    ],
)
def test_other_people_groups_and_hypotheticals_are_not_stated_as_facts_about_the_user(turn):
    assert extract_facts_by_rules(turn) == []


def test_a_value_naming_a_group_of_the_user_is_rejected_but_a_country_abbreviation_is_kept():
    assert extract_facts_by_rules("I live in the US.") == ["The user lives in the US."]
    assert extract_facts_by_rules("I prefer our old office.") == []
