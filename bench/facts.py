"""Realistic memories for the heavy user of the benchmarks: facts of the kinds the write path
keeps, worded as it words them, with people, places, jobs and things from Faker, the same for a
given seed. Embedded by the configured model, they cluster as a real user's memories do (many
of a kind, few of each value), which is what an approximate index must be measured on: random
unit vectors have no such structure, and a graph index finds little in them."""

from __future__ import annotations

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
