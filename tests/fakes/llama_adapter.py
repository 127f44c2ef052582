"""Ollama's API in front of llama.cpp's `llama-server`, so the real `ollama` client talks to a
real model on this machine (`make real-model`, realmodel/; docs/testing.md).

llama-server speaks OpenAI's `/v1/chat/completions` only; every Ollama path answers 404. This
adapter serves one model under an Ollama name:

    GET  /api/version, /api/tags
    POST /api/show    the server's window (/props n_ctx) as `<arch>.context_length`, its own chat
                      template as `template`, "tools" among the capabilities only when that
                      template can describe tools
    POST /api/chat    streamed NDJSON or one object; tool calls back as dicts; `format` (a JSON
                      schema, or "json") as `response_format`; `num_predict` as `max_tokens`;
                      the counts and durations from the server's usage and timings;
                      done_reason "length" when the server stopped at max_tokens or the window
    POST /api/embed   501: the app embeds locally

What cannot be Ollama's:
- **num_ctx**: llama-server's window is fixed when it starts (`-c`); a request's
  `options.num_ctx` cannot change it. `/api/show` reports that window as the model's context
  length, so the agent plans for it and never sends more.
- **Truncation**: llama-server refuses a prompt that does not fit ("request (N tokens) exceeds
  the available context size", HTTP 400) instead of cutting it. The adapter then does what
  Ollama's `chatPrompt` does: it drops the oldest non-system messages, keeping the system
  messages and the newest one, and retries. Ollama's last resort, cutting the start of the
  system prompt, is not done: the request fails with the server's message (HTTP 500).
- A model whose template cannot describe tools answers 400 "does not support tools" to a
  request with tools, as Ollama does (llama-server would drop them silently).

Every request is recorded in `requests` (tokens, durations, finish reason), which the harness
reads for tokens/s.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

#: Ollama option -> llama-server's request field (OpenAI's, or llama.cpp's own extension)
_OPTIONS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
    "seed": "seed",
    "stop": "stop",
    "repeat_penalty": "repeat_penalty",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}


class UpstreamError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ClientGone(Exception):
    """The Ollama client closed its connection (a stopped answer, or its timeout)."""


@dataclass
class Exchange:
    """One /api/chat request as the adapter saw it and what llama-server reported."""

    stream: bool
    structured: bool
    tools: bool
    messages: int
    dropped_messages: int = 0
    num_ctx_asked: int | None = None
    max_tokens: int | None = None
    prompt_tokens: int | None = None
    prompt_ms: float | None = None
    cached_tokens: int | None = None
    eval_tokens: int | None = None
    eval_ms: float | None = None
    finish_reason: str | None = None
    error: str | None = None
    client_closed: bool = False
    content: str = ""
    started: float = field(default_factory=time.time)
    seconds: float = 0.0

    @property
    def eval_per_s(self) -> float | None:
        if self.eval_tokens and self.eval_ms:
            return self.eval_tokens / (self.eval_ms / 1000)
        return None

    @property
    def prompt_per_s(self) -> float | None:
        if self.prompt_ms and self.prompt_tokens is not None and self.cached_tokens is not None:
            processed = self.prompt_tokens - self.cached_tokens
            return processed / (self.prompt_ms / 1000) if processed > 0 else None
        return None


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-request (the agent's time limit, a closed stream) is normal
    here: no traceback on the harness's output for it."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass(frozen=True)
class ServerFacts:
    """What the adapter reports about the model, read once from llama-server's /props."""

    window: int
    template: str
    tools: bool
    build: str
    model_path: str


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def ollama_to_openai(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ollama's messages in OpenAI's shape: tool-call arguments as JSON text, with ids that the
    following tool results refer to (Ollama's messages carry none)."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    for n, msg in enumerate(messages):
        role = msg.get("role", "user")
        item: dict[str, Any] = {"role": role, "content": msg.get("content") or ""}
        calls = msg.get("tool_calls") or []
        if role == "assistant" and calls:
            item["tool_calls"] = []
            pending = []
            for k, call in enumerate(calls):
                fn = call.get("function") or {}
                call_id = f"call_{n}_{k}"
                pending.append(call_id)
                args = fn.get("arguments")
                item["tool_calls"].append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": fn.get("name", ""),
                            "arguments": args if isinstance(args, str) else json.dumps(args or {}),
                        },
                    }
                )
        if role == "tool":
            item["tool_call_id"] = pending.pop(0) if pending else f"call_{n}"
            if msg.get("tool_name"):
                item["name"] = msg["tool_name"]
        out.append(item)
    return out


def openai_request(body: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The /v1/chat/completions body for an Ollama /api/chat body (always streamed upstream, so
    a client that goes away stops the generation)."""
    req: dict[str, Any] = {
        "messages": ollama_to_openai(messages),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    options = body.get("options") or {}
    for name, target in _OPTIONS.items():
        if options.get(name) is not None:
            req[target] = options[name]
    num_predict = options.get("num_predict")
    if isinstance(num_predict, int) and num_predict > 0:  # -1, -2: until stop or window
        req["max_tokens"] = num_predict
    fmt = body.get("format")
    if isinstance(fmt, dict):
        req["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": fmt},
        }
    elif fmt == "json":
        req["response_format"] = {"type": "json_object"}
    if body.get("tools"):
        req["tools"] = body["tools"]
    return req


def fit_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Ollama's way to fit a prompt: drop the oldest non-system message, keeping the system
    messages and the newest message. None when nothing more can be dropped."""
    for i, msg in enumerate(messages[:-1]):
        if msg.get("role") != "system":
            return messages[:i] + messages[i + 1 :]
    return None


def _tool_calls(parts: dict[int, dict[str, str]]) -> tuple[list[dict[str, Any]], str]:
    """The streamed tool calls as Ollama's dicts; arguments that are not a JSON object come
    back as text in the content (where the agent's text-call parser may still read them)."""
    calls: list[dict[str, Any]] = []
    text = ""
    for index in sorted(parts):
        part = parts[index]
        try:
            args = json.loads(part["arguments"] or "{}")
        except ValueError:
            args = None
        if isinstance(args, dict):
            calls.append({"function": {"name": part["name"], "arguments": args}})
        else:
            text += json.dumps({"name": part["name"], "arguments": part["arguments"]})
    return calls, text


class LlamaAdapter:
    """Serves Ollama's API for `model` (an Ollama-style name) on 127.0.0.1, forwarding to the
    llama-server at `upstream` (e.g. http://127.0.0.1:8080)."""

    def __init__(
        self, upstream: str, model: str, *, port: int = 0, timeout_s: float = 600.0
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.model = model
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=5.0))
        self._facts: ServerFacts | None = None
        self.requests: list[Exchange] = []
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> LlamaAdapter:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

    def __enter__(self) -> LlamaAdapter:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- what the server says about its model -------------------------------------------
    def facts(self) -> ServerFacts:
        if self._facts is None:
            props = self._client.get(f"{self.upstream}/props").json()
            caps = props.get("chat_template_caps") or {}
            self._facts = ServerFacts(
                window=int((props.get("default_generation_settings") or {}).get("n_ctx") or 0),
                template=str(props.get("chat_template") or ""),
                tools=bool(caps.get("supports_tool_calls")),
                build=str(props.get("build_info") or ""),
                model_path=str(props.get("model_path") or ""),
            )
        return self._facts

    def tags(self) -> dict[str, Any]:
        return {
            "models": [
                {
                    "name": self.model,
                    "model": self.model,
                    "modified_at": _now(),
                    "size": 0,
                    "digest": "",
                    "details": self._details(),
                }
            ]
        }

    def _details(self) -> dict[str, Any]:
        family, _, size = self.model.partition(":")
        return {"format": "gguf", "family": family, "parameter_size": size}

    def show(self) -> dict[str, Any]:
        facts = self.facts()
        arch = self._details()["family"]
        return {
            "modelfile": "",
            "parameters": "",
            "template": facts.template,
            "details": self._details(),
            "model_info": {"general.architecture": arch, f"{arch}.context_length": facts.window},
            "capabilities": ["completion", *(["tools"] if facts.tools else [])],
        }

    # ---- chat --------------------------------------------------------------------------
    def chat(self, body: dict[str, Any], alive: Any) -> Iterator[dict[str, Any]]:
        """Ollama's chunks for one /api/chat body: content pieces, then the final chunk.
        `alive()` is False once the client has gone (the generation is then stopped)."""
        messages = list(body.get("messages") or [])
        options = body.get("options") or {}
        ex = Exchange(
            stream=body.get("stream", True) is not False,
            structured=bool(body.get("format")),
            tools=bool(body.get("tools")),
            messages=len(messages),
            num_ctx_asked=options.get("num_ctx"),
            max_tokens=options.get("num_predict"),
        )
        with self._lock:
            self.requests.append(ex)
        started = time.monotonic()
        try:
            while True:
                try:
                    yield from self._generate(body, messages, ex, alive)
                    return
                except UpstreamError as e:
                    if "exceeds the available context size" not in e.message:
                        raise
                    fewer = fit_messages(messages)
                    if fewer is None:
                        raise UpstreamError(500, e.message) from e
                    messages = fewer
                    ex.dropped_messages += 1
        except (UpstreamError, ClientGone) as e:
            ex.error = str(e) or type(e).__name__
            raise
        finally:
            ex.seconds = time.monotonic() - started

    def _generate(
        self, body: dict[str, Any], messages: list[dict[str, Any]], ex: Exchange, alive: Any
    ) -> Iterator[dict[str, Any]]:
        req = openai_request(body, messages)
        calls: dict[int, dict[str, str]] = {}
        usage: dict[str, Any] = {}
        timings: dict[str, Any] = {}
        finish = None
        with self._client.stream("POST", f"{self.upstream}/v1/chat/completions", json=req) as r:
            if r.status_code != 200:
                r.read()
                try:
                    message = r.json().get("error", {}).get("message") or r.text
                except ValueError:
                    message = r.text
                raise UpstreamError(r.status_code, str(message))
            for line in r.iter_lines():
                if not alive():
                    ex.client_closed = True
                    raise ClientGone("the client closed the connection")
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if "error" in chunk:
                    raise UpstreamError(500, str(chunk["error"].get("message", chunk["error"])))
                usage = chunk.get("usage") or usage
                timings = chunk.get("timings") or timings
                for choice in chunk.get("choices") or []:
                    finish = choice.get("finish_reason") or finish
                    delta = choice.get("delta") or {}
                    for tc in delta.get("tool_calls") or []:
                        part = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                        fn = tc.get("function") or {}
                        part["name"] += fn.get("name") or ""
                        part["arguments"] += fn.get("arguments") or ""
                    if delta.get("content"):
                        ex.content += delta["content"]
                        yield self._chunk(delta["content"])
        tool_calls, text = _tool_calls(calls)
        if text:
            ex.content += text
            yield self._chunk(text)
        ex.finish_reason = finish
        ex.prompt_tokens = usage.get("prompt_tokens")
        ex.eval_tokens = usage.get("completion_tokens", timings.get("predicted_n"))
        ex.cached_tokens = timings.get("cache_n")
        ex.prompt_ms = timings.get("prompt_ms")
        ex.eval_ms = timings.get("predicted_ms")
        final = self._chunk("")
        if tool_calls:
            final["message"]["tool_calls"] = tool_calls
        ns = 1_000_000
        final.update(
            done=True,
            done_reason="length" if finish == "length" else "stop",
            total_duration=int(((ex.prompt_ms or 0) + (ex.eval_ms or 0)) * ns),
            load_duration=0,
            # as Ollama counts: the tokens read for this request, not the cached prefix
            # (the duration covers only those; a full count made reading look 2x faster)
            prompt_eval_count=ex.prompt_tokens - ex.cached_tokens
            if ex.prompt_tokens is not None and ex.cached_tokens
            else ex.prompt_tokens,
            prompt_eval_duration=int((ex.prompt_ms or 0) * ns),
            eval_count=ex.eval_tokens,
            eval_duration=int((ex.eval_ms or 0) * ns),
        )
        yield final

    def _chunk(self, content: str) -> dict[str, Any]:
        return {
            "model": self.model,
            "created_at": _now(),
            "message": {"role": "assistant", "content": content},
            "done": False,
        }


def _client_alive(sock: socket.socket) -> bool:
    """False once the peer closed: readable with nothing to read (it sends no more after its
    request)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return not readable or sock.recv(1, socket.MSG_PEEK) != b""
    except OSError:
        return False


def _handler(adapter: LlamaAdapter) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # quiet: the harness reports what matters

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def do_GET(self) -> None:
            if self.path == "/api/version":
                self._json(200, {"version": f"llama-server {adapter.facts().build} (adapter)"})
            elif self.path == "/api/tags":
                self._json(200, adapter.tags())
            else:
                self._json(404, {"error": f"{self.path} is not served here"})

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = self._body()
            if self.path == "/api/embed":
                self._json(501, {"error": "no embeddings here: the app embeds locally"})
                return
            if self.path not in ("/api/show", "/api/chat"):
                self._json(404, {"error": f"{self.path} is not served here"})
                return
            name = body.get("model") or body.get("name") or ""
            if name != adapter.model:
                self._json(404, {"error": f"model '{name}' not found"})
                return
            if self.path == "/api/show":
                self._json(200, adapter.show())
                return
            if body.get("tools") and not adapter.facts().tools:
                self._json(
                    400, {"error": f"registry.ollama.ai/library/{name} does not support tools"}
                )
                return
            if body.get("think"):
                self._json(400, {"error": f'"{name}" does not support thinking'})
                return
            self._chat(body)

        def _chat(self, body: dict[str, Any]) -> None:
            chunks = adapter.chat(body, lambda: _client_alive(self.connection))
            stream = body.get("stream", True) is not False
            try:
                first = next(chunks)
            except UpstreamError as e:
                self._json(e.status, {"error": e.message})
                return
            except (ClientGone, StopIteration):
                return
            if not stream:
                content, last = first["message"]["content"], first
                try:
                    for part in chunks:
                        content += part["message"]["content"]
                        last = part
                except UpstreamError as e:
                    self._json(e.status, {"error": e.message})
                    return
                except ClientGone:
                    return
                last["message"]["content"] = content
                self._json(200, last)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                self._write_line(first)
                for part in chunks:
                    self._write_line(part)
            except UpstreamError as e:  # mid-stream: Ollama sends the error as a line
                self._write_line({"error": e.message})
            except (ClientGone, OSError):
                return
            self.wfile.write(b"0\r\n\r\n")

        def _write_line(self, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode() + b"\n"
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler
