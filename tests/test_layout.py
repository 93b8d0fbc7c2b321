"""Dependencies between the project's packages point one way: chat -> memoryapp -> core -> Django.

Read from the source: every import statement of every module (top-level or inside a
function), so a late import cannot hide a back-edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = {"chat", "memoryapp", "core", "config", "eval", "bench", "loadtest", "tests"}


def imports_of(package: str) -> list[tuple[str, str]]:
    """(module path, imported project module) for every project import in `package`."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: resolve against this module's package
                    base = module.split(".")[: -node.level]
                    names = [".".join([*base, node.module] if node.module else base)]
                else:
                    names = [node.module or ""]
            else:
                continue
            found += [(module, name) for name in names if name.split(".")[0] in PROJECT]
    return found


def test_the_reader_sees_imports_of_every_kind():
    # The rules below are only as good as this reader: it must see late and relative imports.
    found = imports_of("chat")
    assert ("chat.services", "memoryapp.services") in found
    assert ("bench.management.commands.bench_memory", "bench") in imports_of("bench")  # inside handle()


def test_core_depends_on_no_app_or_tool():
    assert [(m, name) for m, name in imports_of("core") if name.split(".")[0] != "core"] == []


def test_memoryapp_reads_only_chat_models_for_provenance():
    outward = [(m, name) for m, name in imports_of("memoryapp") if name.split(".")[0] not in {"memoryapp", "core"}]
    assert all(name == "chat.models" for _, name in outward), outward
    # Only the modules that resolve a memory's source turn need the conversation log's models.
    assert {m for m, _ in outward} <= {
        "memoryapp.read.recall",
        "memoryapp.services",
        "memoryapp.write.pipeline",
        "memoryapp.write.store",
    }


@pytest.mark.parametrize("package", ["chat", "memoryapp", "core"])
def test_apps_do_not_import_the_tools(package):
    # The tools own their commands (eval and bench are apps): the product imports none of them.
    tools = {"eval", "bench", "loadtest", "tests"}
    assert [(m, name) for m, name in imports_of(package) if name.split(".")[0] in tools] == []


def test_the_tools_do_not_import_each_other():
    assert [(m, name) for m, name in imports_of("eval") if name.split(".")[0] in {"bench", "loadtest"}] == []
    assert [(m, name) for m, name in imports_of("bench") if name.split(".")[0] in {"eval", "loadtest"}] == []


@pytest.mark.parametrize("package", ["chat", "memoryapp", "core", "eval", "bench", "loadtest"])
def test_nothing_but_settings_and_urls_read_config(package):
    wrong = [(m, name) for m, name in imports_of(package) if name.split(".")[0] == "config"]
    assert wrong == []


MODULE_MAX_LINES = 700
FUNCTION_MAX_LINES = 60


@pytest.mark.parametrize("package", ["core", "memoryapp", "chat"])
def test_modules_and_functions_stay_a_size_a_reader_can_hold(package):
    # A module a newcomer can read through, a function they can see whole (its docstring included).
    too_long = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        source = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        if source.count("\n") > MODULE_MAX_LINES:
            too_long.append(f"{name}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > FUNCTION_MAX_LINES:
                    too_long.append(f"{name}: {node.name}() is {length} lines")
    assert too_long == []
