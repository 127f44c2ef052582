"""A small fake Ollama server: the real `ollama` client talks to it over HTTP.

Speaks the parts of Ollama's API the project uses, with the wire format of ollama-python 0.6.3:

    GET  /api/version   {"version": ...}
    GET  /api/tags      {"models": [{"name", "model", "modified_at", "size", "digest", "details"}]}
    POST /api/show      model details, 404 for a model that is not "pulled"
    POST /api/embed     {"embeddings": [[...], ...]}: deterministic hashed bag-of-words vectors
    POST /api/chat      streamed NDJSON (`"stream": true`) or one JSON object; may carry
                        `message.tool_calls`; 404 for a model that is not "pulled"

Scripting. Each chat request takes the next scripted response from one of two queues:
`structured` (requests with a `format`, i.e. JSON-schema extraction) or `chat` (the rest).
When a queue is empty the default behaviour answers: an "echo" reply for chat that repeats the
user's message and lists the remembered lines it found fenced in the system prompt, and
`{"memories": []}` for structured requests. Every request is recorded (`.requests`), so tests
can assert exactly what reached the prompt.

    with FakeOllama(models=["qwen2.5:7b"]) as fake:
        fake.queue_tool_calls([("aggregate_metrics", {"metric": "sleep_hours"})])
        fake.queue_reply("You slept 7.1 h on average.")
        ... point OLLAMA_HOST at fake.url ...
        assert "sleep" in fake.chat_requests()[0].body["messages"][-1]["content"]

Run standalone (for a Streamlit process under test):

    python -m tests.fakes.fake_ollama --port 11555 [--model qwen2.5:7b ...]

and script it over HTTP from the test process (JSON bodies):

    POST /_fake/reply       {"content": "..."}
    POST /_fake/tool_calls  {"calls": [["aggregate_metrics", {"metric": "steps"}]], "content": ""}
    POST /_fake/structured  {"payload": {"memories": [...]}}   (or a string: sent verbatim)
    POST /_fake/error       {"status": 500, "message": "...", "structured": false}
    POST /_fake/garbled     {"content": "..."}  streamed, with a line that is not JSON after it
    POST /_fake/models      {"models": ["qwen2.5:7b"]}         ([] = "model not pulled")
    POST /_fake/reset       {}
    GET  /_fake/requests    every recorded /api request: [{"method", "path", "body"}]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_MODEL = "qwen2.5:7b"
EMBED_DIMS = 384
_TOKEN_RE = re.compile(r"[a-z0-9]+")
# Lines of the agent's fenced memory block look like: - [episodic/preference] "text" (...)
_MEMORY_LINE_RE = re.compile(r'^- \[[^\]]+\] "(.*)"', re.MULTILINE)
_FENCE_RE = re.compile(r"<<<MEMORY (\w+)>>>(.*?)<<<END MEMORY \1>>>", re.DOTALL)


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    body: dict[str, Any]

    @property
    def system_prompt(self) -> str:
        msgs = self.body.get("messages") or []
        return "\n".join(m.get("content") or "" for m in msgs if m.get("role") == "system")

    @property
    def prompt_text(self) -> str:
        """Every message's content, joined: what the model could read."""
        return "\n".join(m.get("content") or "" for m in self.body.get("messages") or [])

    @property
    def last_user_message(self) -> str:
        for m in reversed(self.body.get("messages") or []):
            if m.get("role") == "user":
                return m.get("content") or ""
        return ""


@dataclass
class Scripted:
    """One scripted chat response."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error: str | None = None
    hold: threading.Event | None = None  # respond only once this is set (timeout tests)
    garbled: bool = False  # a line that is not JSON after the content (a corrupted stream)


Responder = Callable[[RecordedRequest], Scripted]


def embed_text(text: str, dims: int = EMBED_DIMS) -> list[float]:
    """Deterministic hashed bag-of-words vector, L2-normalised (similar words -> similar)."""
    vec = np.zeros(dims, dtype=np.float64)
    for tok in _TOKEN_RE.findall(text.lower()):
        h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
        vec[h % dims] += 1.0 if (h >> 32) & 1 else -1.0
    norm = float(np.linalg.norm(vec))
    if norm == 0:
        vec[0] = 1.0
        norm = 1.0
    return (vec / norm).tolist()


def remembered_lines(system_prompt: str) -> list[str]:
    """The memory texts the agent fenced into a system prompt."""
    out: list[str] = []
    for _, block in _FENCE_RE.findall(system_prompt):
        for raw in _MEMORY_LINE_RE.findall(block):
            try:
                out.append(json.loads(f'"{raw}"'))
            except json.JSONDecodeError:
                out.append(raw)
    return out


def echo_responder(req: RecordedRequest) -> Scripted:
    """Default chat behaviour: repeat the message and mention the recalled memories."""
    memories = remembered_lines(req.system_prompt)
    text = f"You said: {req.last_user_message}"
    if memories:
        text += "\nI remember: " + "; ".join(memories)
    else:
        text += "\nI have no memories about this yet."
    return Scripted(content=text)


def empty_extraction_responder(req: RecordedRequest) -> Scripted:
    return Scripted(content=json.dumps({"memories": []}))


class FakeOllama:
    """The fake server. Thread-safe; start() binds 127.0.0.1 on a free port (or `port`)."""

    def __init__(
        self,
        models: list[str] | None = None,
        *,
        port: int = 0,
        embed_dims: int = EMBED_DIMS,
        chat_default: Responder = echo_responder,
        structured_default: Responder = empty_extraction_responder,
        chunk_words: int = 1,
        no_tools_models: list[str] | None = None,
    ) -> None:
        self.models: list[str] = list(models if models is not None else [DEFAULT_MODEL])
        #: Models that answer 400 "does not support tools" to a request with tools.
        self.no_tools_models: list[str] = list(no_tools_models or [])
        self.embed_dims = embed_dims
        self.chat_default = chat_default
        self.structured_default = structured_default
        self.chunk_words = chunk_words
        self.requests: list[RecordedRequest] = []
        self._chat: deque[Scripted | Responder] = deque()
        self._structured: deque[Scripted | Responder] = deque()
        self._lock = threading.Lock()
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._holds: list[threading.Event] = []

    # ---- lifecycle ---------------------------------------------------------------------
    def start(self) -> FakeOllama:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", self._port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-ollama",
            daemon=True,
        )
        self._thread.start()
        log.info("fake Ollama listening on %s", self.url)
        return self

    def stop(self) -> None:
        for ev in self._holds:
            ev.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> FakeOllama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the fake first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- scripting ---------------------------------------------------------------------
    def queue_reply(self, content: str) -> None:
        """The next chat request gets this assistant text."""
        with self._lock:
            self._chat.append(Scripted(content=content))

    def queue_tool_calls(self, calls: list[tuple[str, Any]], content: str = "") -> None:
        """The next chat request asks for these tool calls: [(name, arguments), ...].

        `arguments` is normally a dict; anything else is sent as given (malformed-call tests).
        """
        tool_calls = [{"function": {"name": n, "arguments": a}} for n, a in calls]
        with self._lock:
            self._chat.append(Scripted(content=content, tool_calls=tool_calls))

    def queue_structured(self, payload: Any) -> None:
        """The next structured (format=...) request gets this: a dict/list is JSON-encoded,
        a str is sent verbatim (so malformed JSON can be scripted)."""
        content = payload if isinstance(payload, str) else json.dumps(payload)
        with self._lock:
            self._structured.append(Scripted(content=content))

    def queue_error(self, status: int, message: str, *, structured: bool = False) -> None:
        with self._lock:
            (self._structured if structured else self._chat).append(
                Scripted(status=status, error=message)
            )

    def queue_garbled(self, content: str = "") -> None:
        """The next streamed chat answer sends `content`, then a line that is not JSON."""
        with self._lock:
            self._chat.append(Scripted(content=content, garbled=True))

    def queue_hold(self, *, structured: bool = False) -> threading.Event:
        """The next request waits until the returned event is set (or the fake stops)."""
        ev = threading.Event()
        self._holds.append(ev)
        with self._lock:
            (self._structured if structured else self._chat).append(
                Scripted(content="(released)", hold=ev)
            )
        return ev

    def queue_responder(self, fn: Responder, *, structured: bool = False) -> None:
        with self._lock:
            (self._structured if structured else self._chat).append(fn)

    def pending(self) -> int:
        with self._lock:
            return len(self._chat) + len(self._structured)

    # ---- inspection --------------------------------------------------------------------
    def chat_requests(self, *, structured: bool | None = False) -> list[RecordedRequest]:
        """Chat requests; structured=None for all, True for format=... ones only."""
        with self._lock:
            reqs = [r for r in self.requests if r.path == "/api/chat"]
        if structured is None:
            return reqs
        return [r for r in reqs if bool(r.body.get("format")) == structured]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._chat.clear()
            self._structured.clear()

    # ---- internals ---------------------------------------------------------------------
    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def _next_chat(self, req: RecordedRequest) -> Scripted:
        structured = bool(req.body.get("format"))
        with self._lock:
            queue = self._structured if structured else self._chat
            item = queue.popleft() if queue else None
        if item is None:
            item = self.structured_default if structured else self.chat_default
        return item(req) if callable(item) else item


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": "2026-11-01T00:00:00Z",
        "size": 4_683_087_332,
        "digest": hashlib.sha256(name.encode()).hexdigest(),
        "details": {
            "format": "gguf",
            "family": "qwen2",
            "families": ["qwen2"],
            "parameter_size": "7.6B",
            "quantization_level": "Q4_K_M",
        },
    }


def _not_found(model: str) -> str:
    return f'model "{model}" not found, try pulling it first'


def _make_handler(fake: FakeOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            log.debug("fake ollama: " + format, *args)

        # -- helpers --
        def _body(self) -> dict[str, Any]:
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n) if n else b""
            if not raw:
                return {}
            try:
                data = json.loads(raw)
            except json.JSONDecodeError:
                return {"_raw": raw.decode("utf-8", "replace")}
            return data if isinstance(data, dict) else {"_raw": data}

        def _send_json(self, status: int, obj: Any) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send_json(status, {"error": message})

        # -- routes --
        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/_fake/requests":
                with fake._lock:
                    reqs = [
                        {"method": r.method, "path": r.path, "body": r.body} for r in fake.requests
                    ]
                return self._send_json(200, reqs)
            fake._record(RecordedRequest("GET", self.path, {}))
            if self.path == "/api/version":
                self._send_json(200, {"version": "0.12.0-fake"})
            elif self.path == "/api/tags":
                self._send_json(200, {"models": [_model_entry(m) for m in fake.models]})
            elif self.path in ("/", ""):
                data = b"Ollama is running"
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            else:
                self._error(404, "not found")

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            body = self._body()
            if self.path.startswith("/_fake/"):
                return self._control(self.path.removeprefix("/_fake/"), body)
            req = RecordedRequest("POST", self.path, body)
            fake._record(req)
            model = str(body.get("model") or "")
            if self.path == "/api/show":
                if model not in fake.models:
                    return self._error(404, _not_found(model))
                entry = _model_entry(model)
                return self._send_json(
                    200,
                    {
                        "modelfile": f"FROM {model}",
                        "parameters": "temperature 0.7",
                        "template": "{{ .Prompt }}",
                        "details": entry["details"],
                        "model_info": {"general.architecture": "qwen2"},
                        "capabilities": ["completion", "tools"],
                        "modified_at": entry["modified_at"],
                    },
                )
            if self.path == "/api/embed":
                if model not in fake.models:
                    return self._error(404, _not_found(model))
                inp = body.get("input", "")
                texts = [inp] if isinstance(inp, str) else list(inp)
                return self._send_json(
                    200,
                    {
                        "model": model,
                        "embeddings": [embed_text(str(t), fake.embed_dims) for t in texts],
                        "total_duration": 1000,
                        "prompt_eval_count": sum(len(str(t).split()) for t in texts),
                    },
                )
            if self.path == "/api/chat":
                return self._chat(req, model)
            self._error(404, "not found")

        def _control(self, action: str, body: dict[str, Any]) -> None:
            """Scripting over HTTP, for a fake running in another process (browser tests)."""
            structured = bool(body.get("structured", False))
            if action == "reply":
                fake.queue_reply(str(body.get("content", "")))
            elif action == "tool_calls":
                calls = [(str(c[0]), c[1]) for c in body.get("calls", [])]
                fake.queue_tool_calls(calls, content=str(body.get("content", "")))
            elif action == "structured":
                fake.queue_structured(body.get("payload", {"memories": []}))
            elif action == "error":
                fake.queue_error(
                    int(body.get("status", 500)),
                    str(body.get("message", "error")),
                    structured=structured,
                )
            elif action == "garbled":
                fake.queue_garbled(str(body.get("content", "")))
            elif action == "models":
                fake.models[:] = [str(m) for m in body.get("models", [])]
            elif action == "reset":
                fake.reset()
            else:
                return self._error(404, f"unknown control action {action!r}")
            self._send_json(200, {"ok": True, "pending": fake.pending()})

        def _chat(self, req: RecordedRequest, model: str) -> None:
            if not model:
                return self._error(400, "model is required")
            if model not in fake.models:
                return self._error(404, _not_found(model))
            if model in fake.no_tools_models and req.body.get("tools"):
                return self._error(
                    400, f"registry.ollama.ai/library/{model} does not support tools"
                )
            scripted = fake._next_chat(req)
            if scripted.hold is not None:
                scripted.hold.wait()
            if scripted.error is not None:
                return self._error(scripted.status, scripted.error)
            stream = req.body.get("stream", True)
            if not stream:
                msg: dict[str, Any] = {"role": "assistant", "content": scripted.content}
                if scripted.tool_calls:
                    msg["tool_calls"] = scripted.tool_calls
                return self._send_json(200, _final(model, msg))
            self._stream(model, scripted)

        def _stream(self, model: str, scripted: Scripted) -> None:
            lines: list[dict[str, Any]] = []
            words = re.findall(r"\S+\s*|\s+", scripted.content)
            step = max(1, fake.chunk_words)
            for i in range(0, len(words), step):
                piece = "".join(words[i : i + step])
                lines.append(
                    {
                        "model": model,
                        "created_at": _now(),
                        "message": {"role": "assistant", "content": piece},
                        "done": False,
                    }
                )
            if scripted.tool_calls:
                lines.append(
                    {
                        "model": model,
                        "created_at": _now(),
                        "message": {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": scripted.tool_calls,
                        },
                        "done": False,
                    }
                )
            lines.append(_final(model, {"role": "assistant", "content": ""}))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            encoded = [json.dumps(line) + "\n" for line in lines]
            if scripted.garbled:  # cut off mid-object, as a proxy or a crash might
                encoded.insert(len(encoded) - 1, '{"model": "' + model + '", "mess\n')
            for text in encoded:
                data = text.encode()
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


def _final(model: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": model,
        "created_at": _now(),
        "message": message,
        "done": True,
        "done_reason": "stop",
        "total_duration": 1_000_000,
        "load_duration": 1000,
        "prompt_eval_count": 10,
        "prompt_eval_duration": 1000,
        "eval_count": 10,
        "eval_duration": 1000,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake Ollama server for tests (127.0.0.1).")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--model", action="append", dest="models", help=f"pulled model (default {DEFAULT_MODEL})"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    fake = FakeOllama(models=args.models or [DEFAULT_MODEL], port=args.port).start()
    # The readiness line: a process under test can wait for it instead of sleeping.
    print(f"fake-ollama listening on {fake.url}", flush=True)
    try:
        assert fake._thread is not None
        fake._thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
