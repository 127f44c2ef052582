"""The language model client: the only module that imports `ollama` for chat.

`OllamaLLM` wraps `ollama.Client` and translates its errors (and httpx's, which the client lets
through while streaming) into `agent.errors`, with messages that say what to run:

    status(model)        fast reachability check (GET /api/tags) -> LLMStatus, never raises
    list_models()        names of the pulled models
    stream_chat(...)     Iterator[LLMChunk]: content pieces as they arrive, then tool calls
    chat_json(...)       one non-streamed answer constrained by a JSON schema (`format=`)
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
import ollama
from pydantic import ValidationError

from agent.errors import (
    LLMError,
    LLMResponseError,
    LLMTimeoutError,
    LLMUnavailableError,
    ModelNotFoundError,
    ToolsNotSupportedError,
)
from agent.types import LLMStatus

log = logging.getLogger(__name__)


@dataclass
class ToolCall:
    """A tool call requested by the model. `arguments` is whatever the model sent."""

    name: str
    arguments: Any


@dataclass
class LLMChunk:
    """One piece of a streamed answer: some content, or (at the end) the tool calls."""

    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    done: bool = False


class LLM(Protocol):
    """What the agent needs from a language model (tests may inject their own)."""

    @property
    def host(self) -> str: ...

    def status(self, model: str) -> LLMStatus: ...

    def list_models(self) -> list[str]: ...

    def stream_chat(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Iterator[LLMChunk]: ...

    def chat_json(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        schema: dict[str, Any],
        options: dict[str, Any] | None = None,
    ) -> str: ...


def start_hint(host: str) -> str:
    return (
        f"Ollama is not reachable at {host}: start it with `ollama serve` "
        "(or set OLLAMA_HOST to where it runs)."
    )


def pull_hint(model: str) -> str:
    return f"Model {model!r} is not pulled: run `ollama pull {model}`."


def _same_model(a: str, b: str) -> bool:
    """'qwen2.5' and 'qwen2.5:latest' name the same model."""

    def norm(m: str) -> str:
        return m if ":" in m else f"{m}:latest"

    return norm(a) == norm(b)


class OllamaLLM:
    """Chat with a local Ollama server through the official client."""

    def __init__(
        self,
        host: str,
        *,
        timeout_s: float = 120.0,
        status_timeout_s: float = 2.0,
    ) -> None:
        self._host = host
        self._timeout_s = timeout_s
        self._client = ollama.Client(host=host, timeout=timeout_s)
        self._probe = ollama.Client(host=host, timeout=status_timeout_s)

    @classmethod
    def from_settings(cls, settings: Any, status_timeout_s: float = 2.0) -> OllamaLLM:
        return cls(
            settings.ollama_host,
            timeout_s=float(settings.ollama_timeout_s),
            status_timeout_s=status_timeout_s,
        )

    @property
    def host(self) -> str:
        return self._host

    # ---- status ------------------------------------------------------------------------
    def status(self, model: str) -> LLMStatus:
        """Is the server up and the model pulled? Never raises."""
        now = time.time()
        try:
            models = self._list(self._probe)
        except LLMError as e:
            return LLMStatus(
                reachable=False,
                host=self._host,
                model=model,
                model_available=False,
                models=[],
                message=str(e),
                checked_at=now,
            )
        available = any(_same_model(model, m) for m in models)
        return LLMStatus(
            reachable=True,
            host=self._host,
            model=model,
            model_available=available,
            models=models,
            message="" if available else pull_hint(model),
            checked_at=now,
        )

    def list_models(self) -> list[str]:
        return self._list(self._client)

    def _list(self, client: ollama.Client) -> list[str]:
        with self._translate(model=None):
            resp = client.list()
        return sorted(m.model for m in resp.models if m.model)

    # ---- chat --------------------------------------------------------------------------
    def stream_chat(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Iterator[LLMChunk]:
        """Stream an answer. Content pieces come as they arrive; tool calls are collected and
        yielded in the final chunk (done=True)."""
        calls: list[ToolCall] = []
        with self._translate(model):
            stream = self._client.chat(
                model=model,
                messages=list(messages),
                tools=list(tools or []) or None,
                stream=True,
                options=options,
            )
            for part in stream:
                msg = part.message
                for tc in msg.tool_calls or []:
                    calls.append(ToolCall(name=tc.function.name, arguments=tc.function.arguments))
                if msg.content:
                    yield LLMChunk(content=msg.content)
        yield LLMChunk(tool_calls=calls, done=True)

    def chat_json(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        schema: dict[str, Any],
        options: dict[str, Any] | None = None,
    ) -> str:
        """One answer constrained to `schema` (Ollama structured outputs). Returns the raw text;
        the caller validates it."""
        with self._translate(model):
            resp = self._client.chat(
                model=model, messages=list(messages), format=schema, stream=False, options=options
            )
        return resp.message.content or ""

    # ---- errors ------------------------------------------------------------------------
    def _translate(self, model: str | None) -> _Translate:
        return _Translate(self._host, model, self._timeout_s)


class _Translate:
    """Context manager turning ollama/httpx errors into agent errors with a hint."""

    def __init__(self, host: str, model: str | None, timeout_s: float) -> None:
        self.host, self.model, self.timeout_s = host, model, timeout_s

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if exc is None or isinstance(exc, LLMError | GeneratorExit):
            return None
        if isinstance(exc, ollama.ResponseError):
            text = str(exc.error)
            if exc.status_code == 404 and self.model and "not found" in text.lower():
                raise ModelNotFoundError(pull_hint(self.model)) from exc
            if "does not support tools" in text.lower():
                raise ToolsNotSupportedError(
                    f"Model {self.model!r} cannot call tools; pick a tool-capable model "
                    "such as qwen2.5:7b or llama3.1:8b."
                ) from exc
            raise LLMResponseError(
                f"Ollama answered with an error ({exc.status_code}): {text}"
            ) from exc
        if isinstance(exc, httpx.ConnectTimeout):
            raise LLMUnavailableError(start_hint(self.host)) from exc
        if isinstance(exc, httpx.TimeoutException):
            raise LLMTimeoutError(
                f"Ollama at {self.host} did not answer within {self.timeout_s:g} s: "
                "the model may still be loading; try again or raise OLLAMA_TIMEOUT_S."
            ) from exc
        if isinstance(exc, ConnectionError | httpx.TransportError | OSError):
            raise LLMUnavailableError(start_hint(self.host)) from exc
        if isinstance(exc, ollama.RequestError):
            raise LLMResponseError(f"Invalid request to Ollama: {exc}") from exc
        if isinstance(exc, json.JSONDecodeError):  # a garbled line in the NDJSON stream
            raise LLMResponseError(
                f"Ollama at {self.host} sent a line that is not valid JSON ({exc.msg}): "
                "the answer was cut off; try again."
            ) from exc
        if isinstance(exc, ValidationError):  # a response the client could not parse
            raise LLMResponseError(f"Ollama sent an answer the client cannot read: {exc}") from exc
        return None
