"""The write path of one user turn, as one short sequence of stages, each owned by one module:

0. parse (`memoryapp.parsed.parse_turn`): the turn is parsed once, and every stage reads that
   one parsed turn;
1. decline (`ParsedTurn.declined`): a turn that carries a secret or asks to forget is never read;
2. extract (`extract.extract_facts`): at most two third-person facts, by a model or the grammar;
   a turn in another language is read into English first (`extract.english_reading`), and only
   a reading that says what the turn says is parsed (`gate.faithful_reading`);
3. gate (`gate.gate_facts`): each fact weighed against its own turn and put through the named
   checks of `checks`; every refusal carries the code of the check that made it;
4. confirm (`confirm.confirm_facts`, off unless MEMORY_CONFIRM_TRANSLATED): a fact from a turn in
   another language is kept only when the model, shown the turn, says the turn states it;
5. store (`store.store_facts`): upsert by content hash with provenance, restatements and
   paraphrases refreshed, single-valued slots superseded.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chat.models import Turn
from memoryapp.parsed import ParsedTurn, parse_turn
from memoryapp.write.confirm import confirm_facts
from memoryapp.write.extract import english_reading, extract_facts
from memoryapp.write.gate import faithful_reading, gate_facts
from memoryapp.write.store import store_facts

if TYPE_CHECKING:
    import numpy as np
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Written:
    """What the write path did with one turn."""

    stored: int = 0  # facts written or refreshed
    declined: str = ""  # "secret" or "forget" when the turn was not read at all
    kept: tuple[str, ...] = ()  # the facts the gate kept
    refused: tuple[tuple[str, str], ...] = ()  # each refused fact with its check's code (memoryapp.write.checks)


def read_in_english(said: ParsedTurn) -> ParsedTurn:
    """The turn with its English reading by the model (`extract.english_reading`) when it has one
    that says what the turn says (`gate.faithful_reading`); unchanged otherwise. Raises
    ModelUnavailable when the reading's call fails."""
    return faithful_reading(said.with_reading(english_reading(said)))


def remember(user: User, turn: Turn, *, turn_vector: np.ndarray | None = None) -> Written:
    """Extract, gate, embed and upsert the durable facts in one user turn. `turn_vector` is the
    turn's embedding by the configured model, when the read path of the chat turn made it.

    Says how many facts were written or refreshed, and why the others were not; small talk
    writes nothing.
    - Facts come only from the user's own turns, at most two per turn; a turn that carries a
      secret (memoryapp.sensitive) or asks to forget writes nothing (`ParsedTurn.declined`).
    - The gate runs before anything is stored, so an invented fact never reaches the table.
    - Turn, facts and gate sources are embedded in one batched call.
    - The upsert keys on (user, content_hash) among live rows: a restatement refreshes
      `last_seen` and the embedding instead of adding a twin, and is recorded as evidence.
    - A fact that says an existing memory in other words (similarity at or above the model's
      paraphrase threshold, same numbers, same polarity) is a restatement of it, not a twin.
    - A fact that fills a single-valued slot (home, name, timezone, ...) retires the user's
      older fact in that slot, recorded as superseded: the latest statement wins.
    - Everything for one turn commits together or not at all; re-running it for the same
      turn is safe (evidence is unique per memory and turn, so nothing is counted twice).
    Raises ModelUnavailable when the extraction or embedding endpoint fails.
    """
    if turn.user_id != user.pk:
        raise PermissionError("remember() was given a turn that belongs to another user")
    if turn.role != Turn.Role.USER or not turn.content.strip():
        return Written()
    said = parse_turn(turn.content, said_on=turn.created_at.date())
    reason = said.declined
    if reason:
        # Not even sent to an extractor: a turn that carries a secret, or that asks to forget,
        # writes and refreshes nothing.
        logger.info("turn %s declined (%s); nothing from it is remembered", turn.pk, reason)
        return Written(declined=reason)

    said = read_in_english(said)
    facts = extract_facts(said)
    if not facts:
        return Written()
    model_name, kept, rejected = gate_facts(said, facts, content_vector=turn_vector)
    kept, unconfirmed = confirm_facts(said, kept)
    rejected = [*rejected, *unconfirmed]
    for fact in rejected:
        logger.debug(
            "write gate refused a fact from turn %s: %s, %s (similarity %.3f)",
            turn.pk,
            fact.check,
            fact.rejected_because,
            fact.similarity,
        )
    return Written(
        stored=store_facts(user, turn, kept, model_name=model_name),
        kept=tuple(fact.text for fact in kept),
        refused=tuple((fact.text, fact.check) for fact in rejected),
    )
