"""The language model client: the only module that imports `ollama` for chat.

`OllamaLLM` translates the client's errors (and httpx's, while streaming) into `agent.errors`;
every request carries `options.num_ctx` = `window(model)`."""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx
import ollama
from pydantic import BaseModel, ValidationError

from agent.errors import (
    LLMError,
    LLMLimitError,
    LLMResponseError,
    LLMTimeoutError,
    LLMUnavailableError,
    ModelNotFoundError,
    ToolsNotSupportedError,
)
from agent.profile import ModelProfile, planned_window
from agent.speed import Sample, Speed, SpeedMeter
from agent.types import LLMStatus

log = logging.getLogger(__name__)
R = TypeVar("R", bound=BaseModel)

#: The longest a JSON request (extraction, summary, merge) may run, loading included; a
#: runaway answer is also stopped by its token cap, whichever comes first.
JSON_TIME_LIMIT_S = 90.0
#: A model that starts writing only as its time limit passes (it was loading) still gets this
#: long (or its whole time limit, if shorter) to write something.
MIN_WRITE_S = 5.0


@dataclass
class ToolCall:
    """A tool call requested by the model. `arguments` is whatever the model sent."""

    name: str
    arguments: Any


@dataclass
class LLMChunk:
    """One piece of a streamed answer: some thinking or content, or (at the end, done=True) the
    tool calls and what the server reported about the request."""

    content: str = ""
    thinking: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    done: bool = False
    #: "stop", "length" when the answer hit num_predict or the window, "time" when the
    #: caller's time limit stopped it
    done_reason: str | None = None
    #: prompt tokens the model evaluated; None when not reported (with prompt caching some
    #: Ollama versions count only the uncached part, so a small count proves nothing)
    prompt_eval_count: int | None = None


class ThinkTags:
    """Moves a `<think>...</think>` block at the start of the content into the thoughts, as it
    streams: Ollama leaves it in the content when it does not know the model thinks, and thoughts
    must never become the (stored, replayed) answer."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self._state = "start"  # start -> inside -> after, or start -> after
        self._buf = ""

    def feed(self, piece: str) -> tuple[str, str]:
        """(thinking, content) that may be passed on now."""
        if self._state == "after":
            return "", piece
        self._buf += piece
        if self._state == "start":
            head = self._buf.lstrip()
            if head.startswith(self.OPEN):
                self._state, self._buf = "inside", head[len(self.OPEN) :]
            elif self.OPEN.startswith(head):
                return "", ""  # maybe the start of the tag: wait for more
            else:
                self._state, out, self._buf = "after", self._buf, ""
                return "", out
        end = self._buf.find(self.CLOSE)
        if end >= 0:
            thought, rest = self._buf[:end], self._buf[end + len(self.CLOSE) :].lstrip()
            self._state, self._buf = "after", ""
            return thought, rest
        keep = next(  # a closing tag may be split over two pieces: hold its start
            (k for k in range(len(self.CLOSE) - 1, 0, -1) if self._buf.endswith(self.CLOSE[:k])),
            0,
        )
        thought = self._buf[: len(self._buf) - keep]
        self._buf = self._buf[len(self._buf) - keep :]
        return thought, ""

    def finish(self) -> tuple[str, str]:
        """What was held back when the answer ended."""
        rest, self._buf = self._buf, ""
        if self._state == "inside":  # thoughts that never closed: still thoughts
            return rest, ""
        return "", rest


class LLM(Protocol):
    """What the agent needs from a language model (tests may inject their own)."""

    @property
    def host(self) -> str: ...

    def status(self, model: str) -> LLMStatus: ...

    def profile(self, model: str, refresh: bool = False) -> ModelProfile | None: ...

    def window(self, model: str) -> int: ...

    def speed(self, model: str) -> Speed | None: ...

    def stream_chat(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
        think: bool | None = None,
        time_limit_s: float | None = None,
    ) -> Iterator[LLMChunk]: ...

    def chat_json(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        schema: dict[str, Any],
        options: dict[str, Any] | None = None,
        time_limit_s: float = JSON_TIME_LIMIT_S,
    ) -> str: ...


def close_stream(stream: object) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        close()


def ask_json(
    llm: LLM, model: str, system: str, user: str, reply: type[R], num_predict: int, instead: str
) -> R | None:
    """One small request answered in `reply`'s JSON schema; None when the model fails or
    answers something else (logged with what happens `instead`)."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    options = {"temperature": 0, "num_predict": num_predict}
    try:
        raw = llm.chat_json(model, messages, reply.model_json_schema(), options)
        return reply.model_validate_json(raw)
    except (ValidationError, ValueError, LLMError) as e:
        log.info("%s unavailable (%s): %s", reply.__name__, e, instead)
        return None


def start_hint(host: str) -> str:
    return (
        f"Ollama is not reachable at {host}: start it with `ollama serve`, or tell the app "
        "where it runs (Getting started says how)."
    )


def pull_hint(model: str) -> str:
    return f"Model {model!r} is not pulled: run `ollama pull {model}`."


def _same_model(a: str, b: str) -> bool:
    """'qwen2.5' and 'qwen2.5:latest' name the same model."""

    def norm(m: str) -> str:
        return m if ":" in m else f"{m}:latest"

    return norm(a) == norm(b)


def ollama_client(host: str, timeout_s: float) -> ollama.Client:
    """The official client for `host`. For a plain http:// host (Ollama's usual), without the
    TLS set-up its requests never use (the certificates loaded: about 60 ms of CPU a client,
    two clients, at the app's cold open): an https:// URL, such as a redirect, goes through a
    transport built, verifying as usual, on its first request."""
    scheme = host.partition("://")[0].lower() if "://" in host else "http"  # as ollama reads it
    if scheme != "http":
        return ollama.Client(host=host, timeout=timeout_s)
    return ollama.Client(
        host=host,
        timeout=timeout_s,
        # given, not built: a context without trust roots, which would refuse any server;
        # no https request reaches it (the mount below takes them)
        transport=httpx.HTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)),
        mounts={"https://": _VerifiedOnFirstUse()},
    )


class _VerifiedOnFirstUse(httpx.BaseTransport):
    """httpx's own transport (certificates verified), built at its first request."""

    def __init__(self) -> None:
        self._transport: httpx.HTTPTransport | None = None
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            if self._transport is None:
                self._transport = httpx.HTTPTransport()
        return self._transport.handle_request(request)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


class OllamaLLM:
    """Chat with a local Ollama server through the official client."""

    def __init__(
        self,
        host: str,
        *,
        timeout_s: float = 120.0,
        status_timeout_s: float = 2.0,
        num_ctx: int = 8192,
        speed_file: Path | None = None,
    ) -> None:
        self._host = host
        self._timeout_s = timeout_s
        self._num_ctx = num_ctx
        self._client = ollama_client(host, timeout_s)
        self._probe = ollama_client(host, status_timeout_s)
        self._profiles: dict[str, ModelProfile] = {}
        self._profiles_lock = threading.Lock()
        self._speeds = SpeedMeter(host, speed_file)

    @classmethod
    def from_settings(cls, settings: Any, config: Any) -> OllamaLLM:
        """The memory's settings (OLLAMA_HOST) composed with the agent's (timeouts, window)."""
        return cls(
            settings.ollama_host,
            timeout_s=float(config.ollama_timeout_s),
            status_timeout_s=float(config.status_timeout_s),
            num_ctx=int(config.num_ctx),
            speed_file=config.speed_file,
        )

    @property
    def host(self) -> str:
        return self._host

    # ---- status ------------------------------------------------------------------------
    def status(self, model: str) -> LLMStatus:
        """Is the server up and the model pulled? Never raises."""
        now = time.time()
        try:
            models, message = self._list(self._probe), pull_hint(model)
        except LLMError as e:
            models, message = None, str(e)
        available = models is not None and any(_same_model(model, m) for m in models)
        return LLMStatus(
            reachable=models is not None,
            host=self._host,
            model=model,
            model_available=available,
            models=models or [],
            message="" if available else message,
            checked_at=now,
        )

    def _list(self, client: ollama.Client) -> list[str]:
        with self._translate(model=None):
            resp = client.list()
        return sorted(m.model for m in resp.models if m.model)

    # ---- what the model can do -----------------------------------------------------------
    def profile(self, model: str, refresh: bool = False) -> ModelProfile | None:
        """The model's profile from `/api/show`, cached per model for the process (a model's
        facts do not change under its name often; `refresh` re-reads them). None when the
        server cannot say."""
        with self._profiles_lock:
            cached = self._profiles.get(model)
        if cached is not None and not refresh:
            return cached
        try:
            with self._translate(model):
                resp = self._probe.show(model)
            prof = ModelProfile.from_show(model, resp.model_dump(by_alias=True))
        except LLMError as e:
            log.info("no profile for %s: %s", model, e)
            return None
        with self._profiles_lock:
            self._profiles[model] = prof
        return prof

    def window(self, model: str) -> int:
        return planned_window(self._num_ctx, self.profile(model))

    def speed(self, model: str) -> Speed | None:
        """How fast `model` read and wrote in its replies so far (or as the speed file
        remembers it); None before the first reply long enough to tell."""
        return self._speeds.speed(model)

    def _options(self, model: str, options: dict[str, Any] | None) -> dict[str, Any]:
        out = dict(options or {})
        out.setdefault("num_ctx", self.window(model))
        return out

    # ---- chat --------------------------------------------------------------------------
    def stream_chat(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None = None,
        options: dict[str, Any] | None = None,
        think: bool | None = None,
        time_limit_s: float | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> Iterator[LLMChunk]:
        """Stream an answer; tool calls and the server's report come in the final chunk. `think` is
        sent only to models that can think. After `time_limit_s` (at least MIN_WRITE_S after the
        first piece: the model was loading) the stream is closed and the final chunk says "time".
        `json_schema`: the answer in that schema (structured outputs)."""
        calls: list[ToolCall] = []
        final = LLMChunk(done=True)
        started = time.monotonic()
        deadline = None if time_limit_s is None else started + time_limit_s
        first_at = last_at = started
        pieces = 0
        prof = self.profile(model)
        with self._translate(model):
            stream = self._client.chat(
                model=model,
                messages=list(messages),
                tools=list(tools or []) or None,
                format=json_schema,
                stream=True,
                options=self._options(model, options),
                think=think if prof is not None and prof.thinking else None,
            )
            tags = ThinkTags()
            try:
                for part in stream:
                    msg = part.message
                    for tc in msg.tool_calls or []:
                        calls.append(
                            ToolCall(name=tc.function.name, arguments=tc.function.arguments)
                        )
                    if msg.content or msg.thinking:
                        last_at, pieces = time.monotonic(), pieces + 1
                        if pieces == 1:
                            first_at = last_at
                            if deadline is not None and time_limit_s is not None:
                                grace = min(MIN_WRITE_S, time_limit_s)
                                deadline = max(deadline, first_at + grace)
                    tagged, content = tags.feed(msg.content or "")
                    thinking = (msg.thinking or "") + tagged
                    if thinking or content:
                        yield LLMChunk(content=content, thinking=thinking)
                    if part.done:
                        final.done_reason = part.done_reason
                        final.prompt_eval_count = part.prompt_eval_count
                        self._observe(model, part, started)
                    elif deadline is not None and time.monotonic() > deadline:
                        final.done_reason = "time"
                        # no final chunk to measure by: a piece is about a token
                        if pieces > 1:
                            took = last_at - first_at
                            sample = Sample(pieces - 1, took, wall_s=last_at - started)
                            self._speeds.observe(model, sample)
                        break
            finally:
                # A stopped answer (the caller closed this generator): close the client's
                # stream now, which closes the HTTP response, so Ollama stops generating
                # instead of the connection lingering until garbage collection.
                close_stream(stream)
            tagged, content = tags.finish()
            if tagged or content:
                yield LLMChunk(content=content, thinking=tagged)
        final.tool_calls = calls
        yield final

    def _observe(self, model: str, part: Any, started: float) -> None:
        """A final chunk's counts and durations, with the client's clock, as a speed sample."""
        sample = Sample.from_server(
            part.prompt_eval_count,
            part.prompt_eval_duration,
            part.eval_count,
            part.eval_duration,
            part.load_duration,
            time.monotonic() - started,
        )
        self._speeds.observe(model, sample)

    def chat_json(
        self,
        model: str,
        messages: Sequence[dict[str, Any]],
        schema: dict[str, Any],
        options: dict[str, Any] | None = None,
        time_limit_s: float = JSON_TIME_LIMIT_S,
    ) -> str:
        """One answer in `schema` (structured outputs), raw text for the caller to validate.
        Cut by its cap or `time_limit_s`: LLMLimitError (cut JSON is no answer). A thinking
        model runs with thinking off; JSON it still put into `thinking` is the answer."""
        content = thinking = ""
        done_reason: str | None = None
        chunks = self.stream_chat(
            model, messages, None, options, False, time_limit_s, json_schema=schema
        )
        for chunk in chunks:
            content += chunk.content
            thinking += chunk.thinking
            if chunk.done:
                done_reason = chunk.done_reason
        if done_reason == "time":
            raise LLMLimitError(
                f"{model} was still writing its JSON answer after {time_limit_s:g} s: it was "
                "stopped",
                "time",
            )
        if done_reason == "length":
            cap = (options or {}).get("num_predict")
            raise LLMLimitError(
                f"{model} did not finish its JSON answer within "
                + (f"its {cap:,}-token cap" if isinstance(cap, int) else "the window")
                + ": it was cut",
                "tokens",
            )
        thought = thinking.strip()
        if not content.strip() and thought.startswith("{"):
            return thought
        return content

    # ---- errors ------------------------------------------------------------------------
    @contextmanager
    def _translate(self, model: str | None) -> Iterator[None]:
        """ollama/httpx errors -> agent errors with a hint."""
        host = self._host
        try:
            yield
        except LLMError:
            raise
        except ollama.ResponseError as exc:
            text = str(exc.error)
            if exc.status_code == 404 and model and "not found" in text.lower():
                raise ModelNotFoundError(pull_hint(model)) from exc
            if "does not support tools" in text.lower():
                raise ToolsNotSupportedError(
                    f"Model {model!r} cannot call tools; pick a tool-capable model "
                    "such as qwen2.5:7b or llama3.1:8b."
                ) from exc
            raise LLMResponseError(
                f"Ollama answered with an error ({exc.status_code}): {text}"
            ) from exc
        except httpx.ConnectTimeout as exc:
            raise LLMUnavailableError(start_hint(host)) from exc
        except httpx.TimeoutException as exc:
            raise LLMTimeoutError(
                f"Ollama at {host} did not answer within {self._timeout_s:g} s: "
                "the model may still be loading; try again or raise OLLAMA_TIMEOUT_S."
            ) from exc
        except (ConnectionError, httpx.TransportError, OSError) as exc:
            raise LLMUnavailableError(start_hint(host)) from exc
        except ollama.RequestError as exc:
            raise LLMResponseError(f"Invalid request to Ollama: {exc}") from exc
        except json.JSONDecodeError as exc:  # a garbled line in the NDJSON stream
            raise LLMResponseError(
                f"Ollama at {host} sent a line that is not valid JSON ({exc.msg}): "
                "the answer was cut off; try again."
            ) from exc
        except ValidationError as exc:  # a response the client could not parse
            raise LLMResponseError(f"Ollama sent an answer the client cannot read: {exc}") from exc
