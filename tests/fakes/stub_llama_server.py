"""A stand-in for llama.cpp's `llama-server`: what it answers on /props and
/v1/chat/completions (server-sent events with usage and timings), scripted, so the Ollama
adapter (tests/fakes/llama_adapter.py) is tested without building the real server.

    stub = StubLlamaServer(tools=False, max_messages=100)
    stub.replies.append(Reply(["Hel", "lo"], finish="length"))
    ... LlamaAdapter(stub.url, "tiny:1m") ...; stub.bodies holds what reached it; stub.stop()
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WINDOW = 2048


@dataclass
class Reply:
    pieces: list[str] = field(default_factory=list)
    finish: str = "stop"
    #: (name, argument text pieces) streamed as OpenAI tool-call deltas
    tool_calls: list[tuple[str, list[str]]] = field(default_factory=list)


class StubLlamaServer:
    """What llama-server answers on /props and /v1/chat/completions (SSE, usage, timings).
    A request with more than `max_messages` messages is refused as too long for the window,
    as llama-server refuses a prompt that does not fit."""

    def __init__(self, *, tools: bool = False, max_messages: int = 100) -> None:
        self.tools = tools
        self.max_messages = max_messages
        self.replies: list[Reply] = []
        self.bodies: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def props(self) -> dict[str, Any]:
        return {
            "default_generation_settings": {"n_ctx": WINDOW},
            "chat_template": "{{ messages }} TEMPLATE",
            "chat_template_caps": {"supports_tool_calls": self.tools},
            "build_info": "b1-test",
            "model_path": "/m/tiny.gguf",
        }

    def events(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        reply = self.replies.pop(0) if self.replies else Reply(["ok"])
        for piece in reply.pieces:
            yield {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
        for k, (name, parts) in enumerate(reply.tool_calls):
            for n, part in enumerate(parts):
                fn = {"arguments": part} | ({"name": name} if n == 0 else {})
                delta = {"tool_calls": [{"index": k, "function": fn}]}
                yield {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        yield {"choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish}]}
        yield {
            "choices": [],
            "usage": {"prompt_tokens": 40, "completion_tokens": len(reply.pieces)},
            "timings": {"cache_n": 10, "prompt_ms": 100.0, "predicted_ms": 500.0},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, stub.props())

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.bodies.append(body)
                if len(body["messages"]) > stub.max_messages:
                    message = "request (5000 tokens) exceeds the available context size (2048 tokens), try increasing it"  # noqa: E501
                    self._send(400, {"error": {"message": message}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in stub.events(body):
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        return Handler
