"""Every check of the write gate, through the whole gate, on the examples it names
(memoryapp.write.checks): each example it rejects is refused with its code, each it keeps is kept."""

import pytest

from memoryapp.parsed import parse_turn
from memoryapp.write.checks import CHECKS, FAR
from memoryapp.write.gate import gate_facts

REJECTS = [
    pytest.param(check.code, turn, fact, id=f"{check.code}-rejects") for check in CHECKS for turn, fact in check.rejects
]
KEEPS = [
    pytest.param(check.code, turn, fact, id=f"{check.code}-keeps") for check in CHECKS for turn, fact in check.keeps
]


@pytest.mark.parametrize(("code", "turn", "fact"), REJECTS)
def test_the_check_refuses_its_example_with_its_code(code, turn, fact):
    _, kept, rejected = gate_facts(parse_turn(turn), [fact])
    assert kept == []
    assert [(r.text, r.check) for r in rejected] == [(fact, code)], rejected[0].rejected_because


@pytest.mark.parametrize(("code", "turn", "fact"), KEEPS)
def test_the_gate_keeps_the_example_the_check_lets_through(code, turn, fact):
    _, kept, rejected = gate_facts(parse_turn(turn), [fact])
    assert [r.text for r in kept] == [fact], [(r.check, r.rejected_because) for r in rejected]


def test_every_check_has_a_code_of_its_own_and_examples_of_both_kinds():
    codes = [check.code for check in CHECKS]
    assert len(set(codes)) == len(codes) and FAR not in codes
    assert all(check.rejects and check.keeps and check.refuses for check in CHECKS)


def test_an_invented_fact_is_refused_as_far_from_its_turn():
    _, kept, rejected = gate_facts(parse_turn("I live in Lisbon."), ["The user is a professional cyclist."])
    assert kept == [] and rejected[0].check == FAR
