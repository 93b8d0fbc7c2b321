"""Confirmation (MEMORY_CONFIRM_TRANSLATED, off by default): a fact from a turn in another language
is kept only when the model, shown the turn itself, says the turn states it.

The kind of case it covers is the mistranslation. A fact from a turn in another language is
written in English, by the model's reading of the turn or by its extraction, and a small model
sometimes puts a different fact in its place: one trade for another ("Profikoch" read as a
professor), one activity for another, a duration read as an age ("od pięciu lat", for five
years, as "5 years old"). The gate cannot tell: the multilingual encoder scores such a fact as
close to the turn as the right one, and the reading, wrong the same way, supports it. Asked
directly whether the turn says the fact, the model reads the turn again, without having to
write anything, and on the suite the local model told the two apart. It is off by default
because it does not tell a mistranslation from a true fact in a language it reads poorly: on the
suite it gave one such fact 0.11, and on the sets kept apart from tuning it refused true facts
and no false one (docs/quality/2026-12-07-confirming-translated-facts.md). A stronger model may
turn it on.

Each fact the gate kept is asked about in a call of its own, answered with one token: the
probability the model gives "yes" against "no" (from the endpoint's log probabilities, or its
answer when it gives none) must reach MEMORY_CONFIRM_FLOOR. An answer that is neither leaves the
fact as the gate decided. A failed call raises ModelUnavailable, as a failed extraction does:
the worker tries the turn's write again.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import Any

from django.conf import settings

from core.llm import ModelUnavailable, as_messages, endpoint_errors, openai_client
from memoryapp.parsed import ParsedTurn
from memoryapp.write.gate import GatedFact

logger = logging.getLogger(__name__)

UNCONFIRMED = "unconfirmed"

CONFIRM_PROMPT = """You check a notebook of facts about the writer of a chat message.
You are shown the message and one claim. Answer "yes" if the message, read as the writer means
it, says the claim is true of the writer; answer "no" if the claim is not said, is mistranslated,
is said of someone else, is only quoted or pasted text, code, a hypothetical, or a joke or
sarcasm. Answer yes or no only."""

# How many alternatives the endpoint is asked to list for the one token of the answer: enough
# for "yes", "no" and their spellings with a capital or a space.
TOP_LOGPROBS = 10


def confirms(said: ParsedTurn) -> bool:
    """Whether this turn's facts are to be confirmed: a turn in another language, with a model."""
    return (
        settings.LLM_ENABLED
        and settings.MEMORY_CONFIRM_TRANSLATED
        and not settings.MEMORY_EXTRACTOR
        and not said.english
    )


def confirm_facts(said: ParsedTurn, kept: list[GatedFact]) -> tuple[list[GatedFact], list[GatedFact]]:
    """The facts of `kept` that the turn states as the model reads it, and those it does not,
    refused as UNCONFIRMED. Every fact is kept as it is for an English turn or without a model."""
    if not kept or not confirms(said):
        return kept, []
    confirmed: list[GatedFact] = []
    refused: list[GatedFact] = []
    for fact in kept:
        p_yes = says(said.text, fact.text)
        if p_yes is None or p_yes >= settings.MEMORY_CONFIRM_FLOOR:
            confirmed.append(fact)
        else:
            reason = f"the turn does not say it, as the model reads it (p(yes) {p_yes:.2f})"
            refused.append(replace(fact, rejected_because=reason, check=UNCONFIRMED))
    return confirmed, refused


def says(turn: str, fact: str) -> float | None:
    """The probability the model gives that `turn` states `fact` about its writer; None when
    its answer is neither yes nor no."""
    client = openai_client(timeout=settings.LLM_EXTRACT_TIMEOUT_SECONDS)
    messages = [
        {"role": "system", "content": CONFIRM_PROMPT},
        {"role": "user", "content": f"<message>{turn}</message>\n<claim>{fact}</claim>"},
    ]
    try:
        response = client.chat.completions.create(
            model=settings.LLM_EXTRACT_MODEL,
            messages=as_messages(messages),
            temperature=0,
            max_tokens=1,
            logprobs=True,
            top_logprobs=TOP_LOGPROBS,
        )
    except endpoint_errors() as exc:
        raise ModelUnavailable(f"confirming a fact failed: {exc.__class__.__name__}") from exc
    try:
        choice = response.choices[0]
    except (AttributeError, IndexError, TypeError):
        return None
    by_logprobs = _yes_share(getattr(choice, "logprobs", None))
    if by_logprobs is not None:
        return by_logprobs
    answer = (choice.message.content or "").strip().strip(".!").lower()
    if answer in {"yes", "no"}:
        return 1.0 if answer == "yes" else 0.0
    logger.warning("confirmation answer was neither yes nor no (%d chars); the gate's decision stands", len(answer))
    return None


def _yes_share(logprobs: Any) -> float | None:
    """p(yes) / (p(yes) + p(no)) over the first token's alternatives; None without them."""
    try:
        alternatives = logprobs.content[0].top_logprobs
    except (AttributeError, IndexError, TypeError):
        return None
    mass = {"yes": 0.0, "no": 0.0}
    for alternative in alternatives or []:
        token = alternative.token.strip().lower()
        if token in mass:
            mass[token] += math.exp(alternative.logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None
