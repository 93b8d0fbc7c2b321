"""Realistic memories for the heavy user of the benchmarks: facts of the kinds the write path
keeps, worded as it words them, with people, places, jobs and things from Faker, the same for a
given seed. Embedded by the configured model, they cluster as a real user's memories do (many
of a kind, few of each value), which is what an approximate index must be measured on: random
unit vectors have no such structure, and a graph index finds little in them."""

from __future__ import annotations

import random
import re

from faker import Faker

_RELATIONS = ("sister", "brother", "mother", "father", "daughter", "son", "cousin", "aunt", "uncle", "friend")
_PETS = ("dog", "cat", "rabbit", "parrot", "hamster", "horse")
_THINGS = ("music", "food", "films", "books", "games", "coffee", "tea", "podcasts")
_INSTRUMENTS = ("guitar", "piano", "violin", "drums", "cello", "flute", "saxophone")
_FOODS = ("peanuts", "shellfish", "gluten", "eggs", "milk", "soy", "sesame", "strawberries")


def _fact(fake: Faker, kind: int) -> str:
    relation, pet = fake.random_element(_RELATIONS), fake.random_element(_PETS)
    templates = (
        lambda: f"The user works as a {fake.job().lower()} at {fake.company()}.",
        lambda: f"The user lives in {fake.city()}.",
        lambda: f"The user's {relation} is named {fake.first_name()}.",
        lambda: f"The user's {relation}'s birthday is on {fake.month_name()} {fake.day_of_month()}.",
        lambda: f"The user has a {pet} named {fake.first_name()}.",
        lambda: f"The user is allergic to {fake.random_element(_FOODS)}.",
        lambda: (
            f"The user plays the {fake.random_element(_INSTRUMENTS)} with {fake.first_name()} on {fake.day_of_week()}s."
        ),
        lambda: f"The user visited {fake.city()} in {fake.country()} in {fake.year()}.",
        lambda: f"The user's favourite colour is {fake.color_name().lower()}.",
        lambda: f"The user likes {fake.random_element(_THINGS)} about {fake.bs()}.",
        lambda: f"The user drives a {fake.color_name().lower()} car bought in {fake.year()}.",
        lambda: f"The user studied {fake.job().lower()} at {fake.city()} University.",
        lambda: f"The user has a meeting with {fake.name()} every {fake.day_of_week()}.",
        lambda: f"The user is working on a project called {fake.catch_phrase()}.",
        lambda: f"The user's {relation} {fake.first_name()} lives in {fake.city()}, {fake.country()}.",
    )
    return templates[kind % len(templates)]()


def heavy_facts(count: int, seed: int) -> list[str]:
    """`count` distinct facts about one user, the same for a given seed."""
    fake = Faker("en_US")
    fake.seed_instance(seed)
    facts: dict[str, None] = {}
    kind = 0
    while len(facts) < count:
        facts[_fact(fake, kind)] = None
        kind += 1
    return list(facts)


# How a user brings up a fact of theirs in a turn: asking about it, or asking for help with it.
_MENTIONS = (
    "Can you remind me: {}?",
    "Is it right that {}?",
    "{}. What would you suggest for this weekend?",
    "Quick one: {}. Does that change anything for my plans?",
)
_FIRST_VERB = re.compile(r"^I (\w+)")


def _in_first_person(fact: str) -> str:
    """A stored fact as the user would say it ("The user lives in Lyon." -> "I live in Lyon")."""
    said = fact.rstrip(".").replace("The user's ", "my ").replace("The user ", "I ")

    def verb(match: re.Match) -> str:
        word = match[1]
        word = {"is": "am", "has": "have"}.get(word, word[:-1] if word.endswith("s") else word)
        return f"I {word}"

    return _FIRST_VERB.sub(verb, said)


def own_fact_turns(facts: list[str], count: int, seed: int) -> list[str]:
    """`count` turns about facts of the user's own, each a random one of `facts` in the user's
    words inside a question or a request, the same for a given seed: the turns recall serves
    (a turn about nothing the user said is mostly turned away by the need decision)."""
    rng = random.Random(seed)
    return [rng.choice(_MENTIONS).format(_in_first_person(fact)) for fact in rng.sample(facts, count)]
