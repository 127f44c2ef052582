"""Tool calls that a small model wrote as text (JSON, fenced, `<tool_call>…</tool_call>`) instead
of in `tool_calls`: parsed only when every call names an offered tool with valid arguments, else
an ordinary answer. `TextCallFilter` holds back streamed text that may still become a call."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.llm import ToolCall

# Longer text is never a call (a real one is a few hundred characters); not parsing it keeps a
# hostile or runaway answer cheap, and the filter stops holding text back at the same length.
MAX_TEXT_CHARS = 20_000
# More calls than this in one answer is a runaway generation, not a plan: shown, not run.
MAX_CALLS = 10

Validator = Callable[[dict[str, Any]], object]

TAG_OPEN = "<tool_call>"
TAG_CLOSE = "</tool_call>"
_FENCE = "```"
_FENCE_LANGS = ("", "json")
# The keys a call object may have: name + arguments/parameters (llama writes "parameters"
# and "type": "function"), or the {"function": {...}} shape of Ollama's own messages.
_CALL_KEYS = frozenset({"name", "arguments", "parameters", "type", "id"})
_WRAPPER_KEYS = frozenset({"function", "type", "id"})
_FIRST_KEYS = _CALL_KEYS | _WRAPPER_KEYS
_FENCE_ONLY_RE = re.compile(r"```[\w-]*")
_DECODER = json.JSONDecoder()


@dataclass
class TextToolCalls:
    """The calls found in an answer's text, and the text outside them (stripped)."""

    calls: list[ToolCall]
    prose: str


def parse_text_tool_calls(content: str, offered: Mapping[str, Validator]) -> TextToolCalls | None:
    """The tool calls written in `content`, or None when it is an ordinary answer. `offered`
    maps each offered tool to a validator that raises on invalid arguments."""
    if not offered or not content or len(content) > MAX_TEXT_CHARS:
        return None
    text = content.strip()
    if text[:1] in ("{", "[") or text.startswith(_FENCE):
        calls = _whole_answer_calls(text, offered)
        if calls:
            return TextToolCalls(calls, "")
    if TAG_OPEN in text:
        return _tagged_calls(text, offered)
    return None


def _whole_answer_calls(text: str, offered: Mapping[str, Validator]) -> list[ToolCall] | None:
    """The whole answer is one call object, a list of them (or objects one after another)."""
    body = _unfence(text)
    if body is None or body[:1] not in ("{", "["):
        return None
    return _calls_from_json(body, offered)


def _tagged_calls(text: str, offered: Mapping[str, Validator]) -> TextToolCalls | None:
    """One call (or list) per <tool_call> block; the closing tag may be missing at the end."""
    blocks: list[str] = []
    prose: list[str] = []
    pos = 0
    while True:
        start = text.find(TAG_OPEN, pos)
        if start < 0:
            prose.append(text[pos:])
            break
        prose.append(text[pos:start])
        start += len(TAG_OPEN)
        end = text.find(TAG_CLOSE, start)
        if end < 0:  # cut off (or stopped) before the closing tag: the block runs to the end
            blocks.append(text[start:])
            break
        blocks.append(text[start:end])
        pos = end + len(TAG_CLOSE)
    calls: list[ToolCall] = []
    for block in blocks:
        body = _unfence(block.strip())
        found = _calls_from_json(body, offered) if body else None
        if not found:
            return None
        calls.extend(found)
    if len(calls) > MAX_CALLS:
        return None
    # A fence the model wrapped around the tags is no prose.
    parts = [p.strip() for p in prose]
    kept = [p for p in parts if p and not _FENCE_ONLY_RE.fullmatch(p)]
    return TextToolCalls(calls, "\n\n".join(kept))


def _unfence(text: str) -> str | None:
    """The body of a ``` or ```json fence (closing fence optional); None for another language."""
    if not text.startswith(_FENCE):
        return text
    newline = text.find("\n")
    if newline < 0 or text[len(_FENCE) : newline].strip().lower() not in _FENCE_LANGS:
        return None
    body = text[newline + 1 :].rstrip()
    if body.endswith(_FENCE):
        body = body[: -len(_FENCE)]
    return body.strip()


def _calls_from_json(body: str, offered: Mapping[str, Validator]) -> list[ToolCall] | None:
    """Calls from JSON text that is nothing but call objects, or None (all or nothing)."""
    values: list[Any] = []
    pos = 0
    try:
        while pos < len(body):
            value, pos = _DECODER.raw_decode(body, pos)
            values.append(value)
            while pos < len(body) and body[pos].isspace():
                pos += 1
    except (ValueError, RecursionError):  # not JSON, or nested deep enough to be hostile
        return None
    objects: list[Any] = []
    for value in values:
        if isinstance(value, list):
            objects.extend(value)
        else:
            objects.append(value)
    if not objects or len(objects) > MAX_CALLS:
        return None
    calls: list[ToolCall] = []
    for obj in objects:
        call = _call_from_object(obj, offered)
        if call is None:
            return None
        calls.append(call)
    return calls


def _call_from_object(obj: Any, offered: Mapping[str, Validator]) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        if not set(obj) <= _WRAPPER_KEYS or obj.get("type", "function") != "function":
            return None
        obj = obj["function"]
    if (
        not set(obj) <= _CALL_KEYS
        or ("arguments" in obj and "parameters" in obj)
        or obj.get("type", "function") != "function"
    ):
        return None
    name = obj.get("name")
    if not isinstance(name, str) or name not in offered:
        return None
    arguments = obj.get("arguments", obj.get("parameters"))
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):  # some models send the arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return None
    if not isinstance(arguments, dict):
        return None
    try:
        offered[name](arguments)
    except Exception:  # any complaint means: not a call we run
        return None
    return ToolCall(name=name, arguments=arguments)


# ---- streaming ---------------------------------------------------------------------------
_HOLD, _RELEASE, _UNDECIDED = "hold", "release", "undecided"
# A run of spaces this long where a call would go on (`{` then pages of blanks) is held
# rather than waited on: holding is always safe, and it keeps each look at the start short.
_MAX_GAP = 64


class TextCallFilter:
    """Decides, piece by piece, which streamed text may be shown now: nothing while the answer
    could still be a call (object, list, fence) or from a `<tool_call>` tag on, up to `max_chars`.
    What is shown does not depend on where the stream splits the text."""

    def __init__(self, max_chars: int = MAX_TEXT_CHARS) -> None:
        self._max = max_chars
        self._text = ""
        self._shown = 0  # text[:shown] has been released
        self._ready = 0  # text[:ready] may be released (the modes move it forward)
        self._scan = 0  # prose mode: where to look for the next "<"
        self._first = 0  # start mode: index of the first non-space character
        # start -> prose (-> tag) or whole; anything held too long -> passthrough
        self._mode = "start"

    @property
    def held(self) -> str:
        return self._text[self._shown :]

    def feed(self, piece: str) -> str:
        """Add a streamed piece; returns the text that may be shown now ("" if held)."""
        self._text += piece
        if self._mode == "start":
            self._decide_start()
        if self._mode == "prose":
            self._scan_prose()
        if self._mode != "prose" and len(self._text) - self._ready > self._max:
            self._mode = "passthrough"
        if self._mode == "passthrough":
            self._ready = len(self._text)
        return self._release()

    def finish(self) -> str:
        """The end of the stream: returns the held text that was never released."""
        held = self.held
        self._shown = self._ready = len(self._text)
        return held

    def _release(self) -> str:
        if self._ready <= self._shown:
            return ""
        out = self._text[self._shown : self._ready]
        self._shown = self._ready
        return out

    def _decide_start(self) -> None:
        while self._first < len(self._text) and self._text[self._first].isspace():
            self._first += 1
        if self._first >= len(self._text):
            return  # only whitespace so far: hold it until the answer shows what it is
        verdict = _start_verdict(self._text, self._first)
        if verdict == _HOLD:
            self._mode = "whole"
        elif verdict == _RELEASE:
            self._mode = "prose"

    def _scan_prose(self) -> None:
        text = self._text
        while True:
            lt = text.find("<", self._scan)
            if lt < 0:
                self._ready = self._scan = len(text)
                return
            candidate = text[lt : lt + len(TAG_OPEN)]
            if candidate == TAG_OPEN:
                self._ready = lt
                self._mode = "tag"
                return
            if TAG_OPEN.startswith(candidate):  # "<", "<to", ... at the end: wait and see
                self._ready = self._scan = lt
                return
            self._scan = lt + 1


def _skip_blanks(text: str, i: int) -> int:
    """The index after the blanks at `i`, or -1 when there are more than _MAX_GAP of them."""
    limit = i + _MAX_GAP
    while i < len(text) and text[i].isspace():
        if i >= limit:
            return -1
        i += 1
    return i


def _start_verdict(text: str, i: int) -> str:
    """Could an answer starting at text[i] be a whole-answer call? Never RELEASE for text
    `parse_text_tool_calls` would accept, and never a change of mind as text is appended."""
    if text[i] == "`":
        head = text[i : i + len(_FENCE)]
        if head != _FENCE:
            return _UNDECIDED if _FENCE.startswith(head) else _RELEASE
        start = i + len(_FENCE)
        newline = text.find("\n", start, start + _MAX_GAP + 1)
        line = text[start : start + _MAX_GAP + 1] if newline < 0 else text[start:newline]
        lang = line.strip().lower()
        if not any(ok.startswith(lang) for ok in _FENCE_LANGS):
            return _RELEASE
        if newline < 0:
            return _HOLD if len(line) > _MAX_GAP else _UNDECIDED
        if lang not in _FENCE_LANGS:
            return _RELEASE
        j = _skip_blanks(text, newline + 1)
        if j < 0:
            return _HOLD
        if j >= len(text):
            return _UNDECIDED
        return _json_verdict(text, j) if text[j] in "{[" else _RELEASE
    if text[i] in "{[":
        return _json_verdict(text, i)
    return _RELEASE


def _json_verdict(text: str, i: int) -> str:
    """text[i] is { or [: does the text start like a call object (or a list of them)?"""
    j = _skip_blanks(text, i + 1)
    if j < 0:
        return _HOLD
    if j >= len(text):
        return _UNDECIDED
    if text[i] == "[":
        return _json_verdict(text, j) if text[j] == "{" else _RELEASE
    if text[j] != '"':
        return _RELEASE
    longest = max(map(len, _FIRST_KEYS))
    close = text.find('"', j + 1, j + longest + 3)
    key = text[j + 1 : j + longest + 2] if close < 0 else text[j + 1 : close]
    plain = key.split("\\")[0]
    if not any(k.startswith(plain) for k in _FIRST_KEYS):
        return _RELEASE
    if "\\" in key:  # an escaped key: leave it to json.loads
        return _HOLD
    if close < 0:
        return _UNDECIDED
    return _HOLD if key in _FIRST_KEYS else _RELEASE
