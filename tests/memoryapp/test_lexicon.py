"""The word lists live in memoryapp/lexicon.toml, once each, and the code only names them."""

import ast
import re
from pathlib import Path

import pytest
from django.conf import settings

from memoryapp.lexicon import entries, words

ROOT = Path(settings.BASE_DIR)
PRODUCT = [path for package in ("core", "memoryapp", "chat") for path in (ROOT / package).rglob("*.py")]
NAMED = re.compile(r"""\b(?:words|ordered)\(\s*["']([\w]+)["']\s*\)""")


def _named_in(path: Path) -> set[str]:
    return set(NAMED.findall(path.read_text(encoding="utf-8")))


def _readers() -> dict[str, set[str]]:
    """Each concept the code names, with the modules that name it."""
    found: dict[str, set[str]] = {}
    for path in PRODUCT:
        for concept in _named_in(path):
            found.setdefault(concept, set()).add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


READERS = _readers()


@pytest.mark.parametrize("concept", sorted(entries()))
def test_each_entry_says_what_it_is_for_and_is_read_where_it_says(concept):
    entry = entries()[concept]
    assert entry["about"].strip(), "say what the words are for"
    assert set(entry) <= {"about", "used_in", "words", "items", "with"}
    if "used_in" in entry:
        said_readers = {entry["used_in"]} if isinstance(entry["used_in"], str) else set(entry["used_in"])
        assert said_readers == READERS.get(concept, set()), "used_in names the modules that read it"
    else:
        assert any(concept in other.get("with", []) for other in entries().values()), "a part of no concept"
        assert concept not in READERS, "used_in names the modules that read it"
    assert set(entry.get("with", [])) <= set(entries())
    lines = entry.get("words", [])
    said = [word for line in ([lines] if isinstance(lines, str) else lines) for word in line.split()]
    said += entry.get("items", [])
    assert said or entry.get("with"), "an empty entry"
    assert all(line.strip() for line in ([lines] if isinstance(lines, str) else lines)), "an empty line"
    assert len(said) == len(set(said)), "no word twice in one entry"


def test_every_list_the_code_names_is_in_the_lexicon_and_no_two_entries_are_the_same():
    named = set().union(*(_named_in(path) for path in PRODUCT))
    assert named <= set(entries())
    assert all(concept in named for concept, entry in entries().items() if "used_in" in entry), "unread"
    lists = [words(concept) for concept in entries()]
    assert len(set(lists)) == len(lists)


# Ordered calendars, not word lists: a weekday's or month's place in them is its number.
CALENDARS = {"WEEKDAYS", "MONTHS"}


def _word_list_literals(path: Path) -> list[str]:
    """Module-level names bound to a set, tuple or list of three or more words written out in the code."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if getattr(target, "id", "") in CALENDARS | {"__all__"}:
            continue
        value = node.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", "") in {"frozenset", "set"} and value.args:
            value = value.args[0]
            if isinstance(value, ast.Call) and getattr(value.func, "attr", "") == "split":
                found.append(ast.unparse(node)[:60])
                continue
        if isinstance(value, ast.Set | ast.List | ast.Tuple):
            strings = [e for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(strings) >= 3 and len(strings) == len(value.elts) and all(" " not in e.value for e in strings):
                found.append(ast.unparse(node)[:60])
    return found


@pytest.mark.parametrize("path", PRODUCT, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_module_writes_a_word_list_of_its_own(path):
    assert _word_list_literals(path) == []
