"""A real HTTP server on 127.0.0.1 that speaks the OpenAI API, for the real `openai` client.

Tests queue behaviours for chat completions (a reply, a JSON body, a status code, a
hang); embeddings are computed with the local model so similarities are real.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


@dataclass
class Behaviour:
    content: str | None = None  # assistant message text
    status: int = 200
    raw_body: bytes | None = None  # sent as is, overriding everything else
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"  # "length": the answer was cut off at max_tokens
    # Streamed answers (`stream: true`): the content goes out in pieces of this many
    # characters, one every `piece_delay` seconds; `fail_after` pieces, the connection drops.
    piece_chars: int = 4
    piece_delay: float = 0.0
    fail_after: int | None = None
    # Run by the server when the request arrives, before it answers: a fault elsewhere that
    # starts while the model is busy (the database going away mid-reply).
    before: Callable[[], None] | None = None


class FakeOpenAI:
    def __init__(self) -> None:
        self.chat_queue: deque[Behaviour] = deque()
        self.default_chat = Behaviour(content='{"facts": []}')
        self.requests: list[dict[str, Any]] = []
        self.embedding_failure: Behaviour | None = None
        self.embedding_failure_after = 0  # successful embedding requests before the failure starts
        self.streams_abandoned = 0  # streamed answers whose reader went away before the end
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, content: str) -> None:
        self.chat_queue.append(Behaviour(content=content))

    def facts(self, *facts: str) -> None:
        self.reply(json.dumps({"facts": list(facts)}))

    def cut_off(self, content: str) -> None:
        """An answer that reached the request's token limit (finish_reason "length")."""
        self.chat_queue.append(Behaviour(content=content, finish_reason="length"))

    def stream(self, content: str, *, piece_chars: int = 4, piece_delay: float = 0.0) -> None:
        """An answer that, asked for as a stream, arrives in timed pieces (a whole one otherwise)."""
        self.chat_queue.append(Behaviour(content=content, piece_chars=piece_chars, piece_delay=piece_delay))

    def drop_mid_stream(self, content: str, *, after: int) -> None:
        """A streamed answer whose connection drops after `after` pieces."""
        self.chat_queue.append(Behaviour(content=content, fail_after=after))

    def fail(self, status: int, *, headers: dict[str, str] | None = None, times: int = 1) -> None:
        for _ in range(times):
            self.chat_queue.append(Behaviour(status=status, headers=headers or {}))

    def hang(self, seconds: float, *, times: int = 1) -> None:
        for _ in range(times):
            self.chat_queue.append(Behaviour(content="late", delay=seconds))

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                if self.path.endswith("/chat/completions"):
                    behaviour = fake.chat_queue.popleft() if fake.chat_queue else fake.default_chat
                    if behaviour.before is not None:
                        behaviour.before()
                    self._chat(body, behaviour)
                elif self.path.endswith("/embeddings"):
                    self._embeddings(body)
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _chat(self, body: dict[str, Any], behaviour: Behaviour) -> None:
                if behaviour.delay:
                    time.sleep(behaviour.delay)
                if behaviour.raw_body is not None:
                    self._send(behaviour.status, behaviour.raw_body, behaviour.headers)
                    return
                if behaviour.status != 200:
                    error = {"error": {"message": "fake failure", "type": "server_error"}}
                    self._send(behaviour.status, error, behaviour.headers)
                    return
                if body.get("stream"):
                    self._stream(body, behaviour)
                    return
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": behaviour.content},
                                "finish_reason": behaviour.finish_reason,
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    },
                )

            def _stream(self, body: dict[str, Any], behaviour: Behaviour) -> None:
                """Server-sent events as the OpenAI API sends them: one chunk per piece, the
                finish reason in the last chunk, then `[DONE]`."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                content = behaviour.content or ""
                size = max(1, behaviour.piece_chars)
                pieces = [content[i : i + size] for i in range(0, len(content), size)]

                def chunk(delta: dict[str, Any], finish_reason: str | None) -> bytes:
                    payload = {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": body.get("model", "fake"),
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
                    }
                    return f"data: {json.dumps(payload)}\n\n".encode()

                try:
                    self.wfile.write(chunk({"role": "assistant", "content": ""}, None))
                    for n, piece in enumerate(pieces):
                        if behaviour.fail_after is not None and n == behaviour.fail_after:
                            self.wfile.write(b"data: {not json")
                            self.wfile.flush()
                            self.connection.shutdown(socket.SHUT_RDWR)
                            return
                        if behaviour.piece_delay:
                            time.sleep(behaviour.piece_delay)
                        self.wfile.write(chunk({"content": piece}, None))
                        self.wfile.flush()
                    self.wfile.write(chunk({}, behaviour.finish_reason))
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    fake.streams_abandoned += 1
                self.close_connection = True

            def _embeddings(self, body: dict[str, Any]) -> None:
                if fake.embedding_failure is not None and fake.embedding_failure_after > 0:
                    fake.embedding_failure_after -= 1
                elif fake.embedding_failure is not None:
                    self._send(fake.embedding_failure.status, {"error": {"message": "fake failure"}})
                    return
                from memoryapp.embeddings import LocalMiniLM

                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = _local_model(LocalMiniLM).embed(texts)
                as_base64 = body.get("encoding_format") == "base64"
                data = [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": base64.b64encode(v.astype(np.float32).tobytes()).decode()
                        if as_base64
                        else v.tolist(),
                    }
                    for i, v in enumerate(vectors)
                ]
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model"),
                        "usage": {"prompt_tokens": 1, "total_tokens": 1},
                    },
                )

        return Handler


_model_lock = threading.Lock()
_model: Any = None


def _local_model(cls: Any) -> Any:
    global _model
    with _model_lock:
        if _model is None:
            _model = cls()
        return _model
