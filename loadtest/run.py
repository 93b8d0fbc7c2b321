"""Drive the app under gunicorn with concurrent users for a fixed time, then check the invariants.

    python -m loadtest.run --users 8 --seconds 60

What it does, in order:
1. creates a throwaway database (`memory_load_<pid>`) on the configured PostgreSQL server (the
   embedded one by default) and migrates it, so development and test data are never touched;
2. creates the users, each with an API token and one conversation;
3. serves the app with gunicorn on 127.0.0.1 and a free port, debug off, the model offline, the
   rate limits raised so that they do not shape the run, and runs the memory worker beside it
   (`manage.py memory_worker`), as `make run` does;
4. has each user state one fact and waits for the worker to write it, so every user has a
   memory to delete from the first second; then, for a fixed time, runs two client threads per
   user (so a user's turns, searches and deletes race each other, and two posts can race for the
   next seq of one conversation): post a turn (half the time), search by meaning (three in ten),
   delete one of the user's memories (two in ten);
5. stops gunicorn, then checks in the database: every turn that got a 201 is there and the user
   turns are exactly those; seqs are unique and gapless per conversation; no two live memories of a
   user share a content hash; no reply whose turn arrived after a delete returned was given the
   deleted memory, and no response sent after a delete returned contains it; a delete that got
   404 was of a memory the app had already retired itself (a newer fact in the same slot);
6. drops the database, prints the report (and writes it as JSON with --json) and exits 1 if any
   request failed or any invariant does not hold.

Plain threads and http.client rather than locust: the run needs per-request send and return
times joined to database rows afterwards, which is simpler with the raw records in hand, and
it adds no dependency. Everything is bounded (users, seconds, a 30 s timeout per request) and
cleaned up on any exit, including SIGTERM and Ctrl-C.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
MAX_USERS = 32
MAX_SECONDS = 300
REQUEST_TIMEOUT = 30.0
START_TIMEOUT = 60.0
HIGH_LIMIT = "1000000"

# What the users say: self-disclosures the offline rules turn into facts, with few enough
# variants that restatements (the upsert path) are common, and small talk that writes nothing.
STATEMENTS = [
    "I live in {city}.",
    "I'm allergic to {food}.",
    "My name is {name}.",
    "I work as a {job}.",
    "I prefer {drink} in the morning.",
    "I have a dog called {pet}.",
    "I speak {language}.",
]
CHOICES = {
    "city": ["Lisbon", "Porto", "Oslo"],
    "food": ["peanuts", "shellfish"],
    "name": ["Priya", "Sam", "Ana"],
    "job": ["nurse", "pilot"],
    "drink": ["tea", "coffee"],
    "pet": ["Rex", "Bolt"],
    "language": ["Portuguese", "Norwegian"],
}
SMALL_TALK = ["What is the weather like today?", "Thanks, that helps.", "Can you summarise what you know about me?"]
PROBES = [
    "Where do I live?",
    "What am I allergic to?",
    "What should I drink?",
    "Tell me about my pets.",
    "What is my job?",
]


@dataclass(frozen=True)
class LoadUser:
    username: str
    token: str
    conversation: str


SEED_STATEMENT = "I'm allergic to peanuts."  # each user's first memory (see `seed`)
WARM_UP_USER = "load-warm-up"  # not one of the load's users: its turn is left out of the invariants


def create_users(usernames: list[str]) -> list[LoadUser]:
    """Users with an API token and one conversation each (no password: they only use tokens)."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from chat.services import conversation_create

    users = []
    for username in usernames:
        user = get_user_model().objects.create_user(username=username, password=None)
        token = Token.objects.create(user=user)
        conversation = conversation_create(user=user, title="load")
        users.append(LoadUser(user.username, token.key, conversation.public_id))
    return users


# --- The server -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_environment(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MEMORY_EMBEDDING_", "MEMORY_CHAT_"))}
    env.update(
        DATABASE_URL=database_url,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_SECURE_SSL_REDIRECT="0",  # plain HTTP on loopback
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        RATE_LIMIT_CHAT=HIGH_LIMIT,
        RATE_LIMIT_SEARCH=HIGH_LIMIT,
        RATE_LIMIT_LOGIN=HIGH_LIMIT,
        RATE_LIMIT_SIGNUP=HIGH_LIMIT,
        MEMORY_LOG_LEVEL="WARNING",
    )
    return env


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log: Path

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


@contextmanager
def gunicorn(database_url: str, workers: int, threads: int = 1) -> Iterator[Server]:
    """gunicorn on 127.0.0.1 and a free port (sync workers, or threaded ones with `threads`);
    stopped (SIGTERM, then SIGKILL) on leaving the block."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="memory-load-") as folder:
        log = Path(folder) / "gunicorn.log"
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi:application",
            f"--bind=127.0.0.1:{port}",
            f"--workers={workers}",
            *(["--worker-class=gthread", f"--threads={threads}"] if threads > 1 else []),
            "--timeout=60",
            "--graceful-timeout=10",
            "--log-level=warning",
        ]
        with log.open("wb") as sink:
            process = subprocess.Popen(  # noqa: S603 - our own interpreter and a fixed argument list
                command, cwd=BASE_DIR, env=server_environment(database_url), stdout=sink, stderr=subprocess.STDOUT
            )
        server = Server(process, port, log)
        try:
            _wait_until_serving(server)
            yield server
        finally:
            _stop(process, grace=15)


def _stop(process: subprocess.Popen, *, grace: float) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `grace` seconds."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@contextmanager
def memory_worker(database_url: str) -> Iterator[subprocess.Popen]:
    """The memory-write worker on the same database, once it polls the queue; stopped (SIGTERM,
    then SIGKILL) on leaving."""
    command = [sys.executable, "manage.py", "memory_worker", "--interval", "0.1"]
    command += ["--no-reload", "--no-startup-delay"]
    folder = tempfile.mkdtemp(prefix="memory-worker-")
    log = Path(folder) / "worker.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and a fixed argument list
            command, cwd=BASE_DIR, env=server_environment(database_url), stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while b"Starting worker" not in log.read_bytes():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the memory worker did not start:\n{log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.2)
        yield process
    finally:
        _stop(process, grace=30)
        shutil.rmtree(folder, ignore_errors=True)


def _wait_until_serving(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            connection.request("GET", "/accounts/login/")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer within {START_TIMEOUT:.0f} s:\n{server.log_tail()}")


# --- The clients ----------------------------------------------------------------------------


@dataclass
class Sample:
    kind: str
    status: int  # 0: no answer (connection error or timeout)
    sent: float  # wall-clock seconds, comparable with the server's timestamps on this machine
    returned: float
    error: str = ""

    @property
    def latency(self) -> float:
        return self.returned - self.sent


def call(
    port: int, token: str, method: str, path: str, body: dict | None = None
) -> tuple[int, dict | None, float, float]:
    """One request on a fresh connection (gunicorn's sync workers close each one anyway)."""
    headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    sent = time.time()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
    try:
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        returned = time.time()
    finally:
        connection.close()
    data = None
    if raw and response.getheader("Content-Type", "").startswith("application/json"):
        data = json.loads(raw)
    return response.status, data, sent, returned


@dataclass
class UserState:
    """What the clients of one user know and share."""

    user: LoadUser
    lock: threading.Lock = field(default_factory=threading.Lock)
    known: set[int] = field(default_factory=set)  # live memory ids learned from responses
    claimed: set[int] = field(default_factory=set)  # ids chosen for deletion: never deleted twice


@dataclass
class Record:
    """Everything the clients saw, for the figures and the invariants."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    samples: list[Sample] = field(default_factory=list)
    turns: list[tuple[str, int, str]] = field(default_factory=list)  # (conversation, seq, content) per 201
    unanswered_turns: int = 0  # posts that got no answer: their turn may or may not exist
    deletes: dict[int, float] = field(default_factory=dict)  # memory id -> when its 204 returned
    # 404s on delete: (user, memory id, when it returned); each must be a memory the app itself had
    # retired by then (a newer fact in the same single-valued slot supersedes the older one).
    gone: list[tuple[str, int, float]] = field(default_factory=list)
    seen: list[tuple[str, int, float]] = field(default_factory=list)  # (kind, memory id, request sent)


def client(port: int, state: UserState, record: Record, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    user = state.user
    while time.monotonic() < deadline:
        roll = rng.random()
        with state.lock:
            candidates = sorted(state.known - state.claimed)
            victim = rng.choice(candidates) if roll >= 0.8 and candidates else None
            if victim is not None:
                state.claimed.add(victim)
        if victim is not None:
            kind, method, path, body = "delete", "DELETE", f"/api/memories/{victim}/", None
        elif roll < 0.5 or roll >= 0.8:
            if rng.random() < 0.8:
                template = rng.choice(STATEMENTS)
                content = template.format(**{k: rng.choice(v) for k, v in CHOICES.items()})
            else:
                content = rng.choice(SMALL_TALK)
            kind, method, path, body = (
                "turn",
                "POST",
                f"/api/conversations/{user.conversation}/turns/",
                {"content": content},
            )
        else:
            kind, method, path, body = "search", "POST", "/api/memories/search/", {"probe": rng.choice(PROBES)}
        try:
            status, data, sent, returned = call(port, user.token, method, path, body)
        except (OSError, http.client.HTTPException, ValueError) as exc:
            now = time.time()
            with record.lock:
                record.samples.append(Sample(kind, 0, now, now, error=f"{type(exc).__name__}: {exc}"))
                record.unanswered_turns += kind == "turn"
            continue
        learned: set[int] = set()
        with record.lock:
            record.samples.append(Sample(kind, status, sent, returned))
            if kind == "turn" and status == 201 and data:
                turn = data["user_turn"]
                record.turns.append((user.conversation, turn["seq"], turn["content"]))
                learned = {m["memory_id"] for m in turn["memories_written"]}
                record.seen.extend(("reply", m["memory_id"], sent) for m in data["reply"]["memories_used"])
            elif kind == "search" and status == 200 and data:
                learned = {hit["id"] for hit in data["results"]}
                record.seen.extend(("search", memory_id, sent) for memory_id in learned)
            elif kind == "delete" and status == 204:
                record.deletes[victim] = returned
            elif kind == "delete" and status == 404:
                record.gone.append((user.username, victim, returned))
        if learned:
            with state.lock:
                state.known |= learned


def warm_up_worker(port: int) -> None:
    """One statement through the API and the memory worker before the clock starts, so the
    worker has loaded its models and the run's writes land while the run can still see them."""
    from chat.models import Turn

    (user,) = create_users([WARM_UP_USER])
    status, data, _, _ = call(
        port, user.token, "POST", f"/api/conversations/{user.conversation}/turns/", {"content": "I live in Lisbon."}
    )
    if status != 201 or not data:
        raise RuntimeError(f"the warm-up turn got {status}")
    deadline = time.monotonic() + START_TIMEOUT
    turn = Turn.objects.filter(user__username=WARM_UP_USER, role=Turn.Role.USER)
    while turn.values_list("memory_state", flat=True).get() == Turn.MemoryState.QUEUED:
        if time.monotonic() > deadline:
            raise RuntimeError("the memory worker did not write the warm-up turn in time")
        time.sleep(0.1)


def seed(port: int, users: list[LoadUser], record: Record) -> dict[str, set[int]]:
    """One statement per user through the API and the worker before the clock starts, so each
    user has a memory to delete from the run's first second: a delete races turns and searches
    however slowly the machine writes memories during the run. The seed turns are checked with
    the run's turns but left out of its figures; returns the memory ids each user starts with."""
    from chat.models import Turn

    for user in users:
        status, data, _, _ = call(
            port, user.token, "POST", f"/api/conversations/{user.conversation}/turns/", {"content": SEED_STATEMENT}
        )
        if status != 201 or not data:
            raise RuntimeError(f"the seed turn of {user.username} got {status}")
        turn = data["user_turn"]
        record.turns.append((user.conversation, turn["seq"], turn["content"]))
    deadline = time.monotonic() + START_TIMEOUT
    queued = Turn.objects.filter(
        user__username__in=[u.username for u in users], role=Turn.Role.USER, memory_state=Turn.MemoryState.QUEUED
    )
    while queued.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the memory worker did not write the seed turns in time")
        time.sleep(0.1)
    known = {}
    for user in users:
        status, data, _, _ = call(port, user.token, "GET", "/api/memories/")
        if status != 200 or not data or not data["results"]:
            raise RuntimeError(f"the seed turn of {user.username} left no memory ({status})")
        known[user.username] = {memory["id"] for memory in data["results"]}
    return known


def warm_up(port: int, users: list[LoadUser], workers: int) -> None:
    """Load the embedding model in every worker before the clock starts."""
    threads = [
        threading.Thread(
            target=call,
            args=(port, users[i % len(users)].token, "POST", "/api/memories/search/"),
            kwargs={"body": {"probe": "hello"}},
        )
        for i in range(2 * workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def drive(
    port: int, users: list[LoadUser], seconds: float, clients_per_user: int, record: Record, known: dict[str, set[int]]
) -> float:
    started = time.monotonic()
    deadline = started + seconds
    threads = []
    for index, user in enumerate(users):
        state = UserState(user, known=set(known.get(user.username, ())))
        for n in range(clients_per_user):
            seed = index * 1000 + n
            threads.append(threading.Thread(target=client, args=(port, state, record, deadline, seed), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + REQUEST_TIMEOUT + 10)
    return time.monotonic() - started


# --- The figures and the invariants ---------------------------------------------------------

# A delete's 404 is checked against the database in `invariants` (see Record.gone).
EXPECTED = {"turn": {201}, "search": {200}, "delete": {204, 404}}


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def figures(record: Record, elapsed: float) -> dict:
    by_kind: dict[str, list[Sample]] = defaultdict(list)
    for sample in record.samples:
        by_kind[sample.kind].append(sample)
    kinds = {}
    for kind in ("turn", "search", "delete"):
        samples = by_kind.get(kind, [])
        ok = [s for s in samples if s.status in EXPECTED[kind]]
        latencies = [s.latency * 1000 for s in ok]
        errors = Counter(str(s.status) if s.status else s.error.split(":")[0] for s in samples if s not in ok)
        kinds[kind] = {
            "requests": len(samples),
            "ok": len(ok),
            "rps": round(len(samples) / elapsed, 1),
            "p50_ms": round(_percentile(latencies, 0.50), 1),
            "p95_ms": round(_percentile(latencies, 0.95), 1),
            "errors": dict(errors),
        }
    total = len(record.samples)
    return {
        "seconds": round(elapsed, 1),
        "requests": total,
        "rps": round(total / elapsed, 1),
        "errors": sum(sum(k["errors"].values()) for k in kinds.values()),
        "kinds": kinds,
    }


def invariants(record: Record) -> dict[str, int]:
    """Counts of violations found in the database after the run (all should be 0)."""
    from datetime import UTC, datetime

    from django.db import connection
    from django.db.models import Count, Max

    from chat.models import Turn
    from memoryapp.models import Memory, MemoryRecall

    user_turns = Turn.objects.filter(role=Turn.Role.USER).exclude(user__username=WARM_UP_USER)
    stored = set(user_turns.values_list("conversation__public_id", "seq", "content"))
    lost = sum(1 for turn in record.turns if turn not in stored)
    # An unanswered post may have been stored; anything beyond that is a turn nobody was told about.
    extra = len(stored) - len(record.turns)
    unexplained = extra - record.unanswered_turns if extra > 0 else 0

    duplicate_seqs = Turn.objects.values("conversation", "seq").annotate(n=Count("id")).filter(n__gt=1).count()
    gaps = sum(
        1
        for row in Turn.objects.values("conversation").annotate(n=Count("id"), last=Max("seq"))
        if row["n"] != row["last"]
    )
    duplicate_live = (
        Memory.objects.filter(deleted_at__isnull=True)
        .values("user", "content_hash")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )

    deleted_at = {memory_id: datetime.fromtimestamp(at, tz=UTC) for memory_id, at in record.deletes.items()}
    recalled_after_delete = recalled_before_delete = 0
    undeleted = 0
    if deleted_at:
        undeleted = Memory.objects.filter(pk__in=deleted_at, deleted_at__isnull=True).count()
        # A reply recalls with its turn as the probe; a turn stored after the delete had returned
        # started its recall after the delete had committed, so it must not see the memory.
        recalls = MemoryRecall.objects.filter(memory_id__in=deleted_at).values_list(
            "memory_id", "probe_turn__created_at"
        )
        recalled_after_delete = sum(1 for memory_id, probed in recalls if probed > deleted_at[memory_id])
        recalled_before_delete = len(recalls) - recalled_after_delete
    seen_deleted = [
        sent > record.deletes[memory_id] for _, memory_id, sent in record.seen if memory_id in record.deletes
    ]
    seen_after_delete = sum(seen_deleted)
    # A 404 on delete is right only for the user's own memory that was already retired when it returned.
    retired = {
        (username, memory_id): at
        for username, memory_id, at in Memory.objects.filter(pk__in=[m for _, m, _ in record.gone]).values_list(
            "user__username", "pk", "deleted_at"
        )
    }
    wrong_404 = sum(
        1
        for username, memory_id, returned in record.gone
        if (at := retired.get((username, memory_id))) is None or at.timestamp() > returned
    )
    connection.close()
    return {
        "lost_turns": lost,
        "user_turns_stored": len(stored),
        "user_turns_acknowledged": len(record.turns),
        "unacknowledged_turns_stored": max(unexplained, 0),
        "duplicate_seqs": duplicate_seqs,
        "conversations_with_seq_gaps": gaps,
        "duplicate_live_memories": duplicate_live,
        "deletes": len(record.deletes),
        "deletes_of_memories_already_retired": len(record.gone),
        "delete_404_of_a_live_memory": wrong_404,
        "deleted_memories_live_again": undeleted,
        "recalls_of_deleted_after_delete": recalled_after_delete,
        "responses_with_deleted_after_delete": seen_after_delete,
        # Not violations: how often the race was there to lose (a memory recalled or returned
        # by a request that started before its delete returned).
        "recalls_of_deleted_before_delete": recalled_before_delete,
        "responses_with_deleted_before_delete": len(seen_deleted) - seen_after_delete,
    }


VIOLATIONS = [
    "delete_404_of_a_live_memory",
    "lost_turns",
    "unacknowledged_turns_stored",
    "duplicate_seqs",
    "conversations_with_seq_gaps",
    "duplicate_live_memories",
    "deleted_memories_live_again",
    "recalls_of_deleted_after_delete",
    "responses_with_deleted_after_delete",
]


# --- Entry point ----------------------------------------------------------------------------


def _bounded(low: int, high: int):
    def parse(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}")
        return value

    return parse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m loadtest.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=_bounded(1, MAX_USERS), default=8)
    parser.add_argument("--seconds", type=_bounded(1, MAX_SECONDS), default=20)
    parser.add_argument("--workers", type=_bounded(1, 16), default=4, help="gunicorn worker processes")
    parser.add_argument("--clients-per-user", type=_bounded(1, 4), default=2)
    parser.add_argument("--json", type=Path, help="also write the report here")
    return parser.parse_args(argv)


def _stop_on_sigterm(signum, frame) -> None:
    raise SystemExit(128 + signum)  # unwinds through the finally blocks: gunicorn and the database go


def run(args: argparse.Namespace) -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    name = f"memory_load_{os.getpid()}"
    report: dict = {
        "database": name,
        "users": args.users,
        "clients_per_user": args.clients_per_user,
        "workers": args.workers,
        "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }
    from core.databases import scratch_database

    with scratch_database(name) as database:
        users = create_users([f"load-user-{index}" for index in range(args.users)])
        with gunicorn(database.url, args.workers) as server, memory_worker(database.url) as worker:
            report["gunicorn_pid"] = server.process.pid
            report["worker_pid"] = worker.pid
            warm_up(server.port, users, args.workers)
            warm_up_worker(server.port)
            record = Record()
            known = seed(server.port, users, record)
            elapsed = drive(server.port, users, args.seconds, args.clients_per_user, record, known)
            report["load_after"] = [round(x, 2) for x in os.getloadavg()]
            if any(s.status >= 500 or s.status == 0 for s in record.samples):
                report["server_log"] = server.log_tail()
        report["figures"] = figures(record, elapsed)
        report["invariants"] = invariants(record)
    report["ok"] = report["figures"]["errors"] == 0 and all(report["invariants"][k] == 0 for k in VIOLATIONS)
    report["samples"] = Counter(s.kind for s in record.samples)
    report["first_errors"] = [asdict(s) for s in record.samples if s.status not in EXPECTED[s.kind]][:5]
    return report


def render(report: dict) -> str:
    figures_ = report["figures"]
    lines = [
        f"{report['users']} users x {report['clients_per_user']} clients, {report['workers']} gunicorn workers, "
        f"{figures_['seconds']} s on {report['cores']} cores (load {report['load_before']} before)",
        f"{figures_['requests']} requests, {figures_['rps']} per second, {figures_['errors']} errors",
        f"{'kind':<8}{'requests':>9}{'rps':>8}{'p50 ms':>9}{'p95 ms':>9}  errors",
    ]
    for kind, row in figures_["kinds"].items():
        lines.append(
            f"{kind:<8}{row['requests']:>9}{row['rps']:>8}{row['p50_ms']:>9}{row['p95_ms']:>9}  {row['errors'] or 0}"
        )
    lines.append("invariants: " + ", ".join(f"{k} {v}" for k, v in report["invariants"].items()))
    lines.append("OK" if report["ok"] else "FAILED")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    report = run(args)
    print(render(report))
    if report.get("server_log"):
        print("--- gunicorn log (tail) ---\n" + report["server_log"], file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
