"""A fixed extractor for the write benchmark: a lookup table, no model, no rules.

Plugged in with `override_settings(MEMORY_EXTRACTOR=FIXED_EXTRACTOR)`, it makes `remember`
take the same facts from the same turns on every run while extraction itself costs a dict
lookup, so the write path is timed without the model call: the local embedding, the write
gate and the SQL. The facts are what the built-in rule extractor returns for these turns.
"""

from __future__ import annotations

FIXED_EXTRACTOR = "bench.extractor.fixed_facts"

# Each turn states one or two durable facts about the speaker.
FIXED_FACTS: dict[str, list[str]] = {
    "My name is Priya Raman.": ["The user's name is Priya Raman."],
    "I live in Lisbon, and I'm always in UTC.": ["The user's timezone is UTC.", "The user lives in Lisbon."],
    "I work at Acme as a data scientist.": ["The user works at Acme as a data scientist."],
    "I'm vegetarian.": ["The user is vegetarian."],
    "I have two cats.": ["The user has two cats."],
    "I speak Portuguese and German.": ["The user speaks Portuguese and German."],
    "I use a MacBook Pro for work.": ["The user uses a MacBook Pro for work."],
    "I hate emoji in emails.": ["The user dislikes emoji in emails."],
    "I prefer tea over coffee.": ["The user prefers tea over coffee."],
    "My daughter is called Ana.": ["The user's daughter is named Ana."],
    "I'm a nurse.": ["The user is a nurse."],
    "I love hiking.": ["The user likes hiking."],
    "I'm allergic to peanuts.": ["The user is allergic to peanuts."],
    "I live in Porto.": ["The user lives in Porto."],
    "I work at Globex as a software engineer.": ["The user works at Globex as a software engineer."],
    "I prefer short answers.": ["The user prefers short answers."],
    "I have a dog.": ["The user has a dog."],
    "I speak Japanese.": ["The user speaks Japanese."],
    "I use Linux at home.": ["The user uses Linux at home."],
    "I dislike long meetings.": ["The user dislikes long meetings."],
    "I love jazz, and I play the piano.": ["The user likes jazz.", "The user plays the piano."],
    "My son is called Tomas.": ["The user's son is named Tomas."],
    "I'm always in CET.": ["The user's timezone is CET."],
    "I prefer metric units.": ["The user prefers metric units."],
    "I'm a teacher.": ["The user is a teacher."],
    "I hate small talk.": ["The user dislikes small talk."],
    "I use an iPhone.": ["The user uses an iPhone."],
    "I love Italian food.": ["The user likes Italian food."],
    "I work at Initech as a product manager.": ["The user works at Initech as a product manager."],
    "I'm vegan.": ["The user is vegan."],
    "I have three kids.": ["The user has three kids."],
    "I prefer email over phone calls.": ["The user prefers email over phone calls."],
    "I live in Berlin.": ["The user lives in Berlin."],
    "I speak French.": ["The user speaks French."],
    "I dislike cilantro.": ["The user dislikes cilantro."],
    "I love cycling.": ["The user likes cycling."],
    "My wife is called Marta.": ["The user's wife is named Marta."],
    "I'm lactose intolerant.": ["The user is lactose intolerant."],
    "I use Vim for coding.": ["The user uses Vim for coding."],
    "I prefer dark mode.": ["The user prefers dark mode."],
}

TURNS = list(FIXED_FACTS)


def fixed_facts(text: str) -> list[str]:
    """The table's facts for a corpus turn; nothing for any other text."""
    return list(FIXED_FACTS.get(text, []))
