"""A reply that repeats the agent's own instructions is no answer: a base model continues its
prompt (Gemma 3 270M copied the system prompt, fence and memories included). Quoting a memory
is using it; the fence, a memory line as the block renders it, `ECHO_WORDS` words in a row of
the rules or of the tool schemas are an echo. `python -m agent check` fails a probe on one; a
chat turn stops the reply (`EchoGuard`, as it streams) and says what happened. A reply that
repeats itself (SmolLM2 135M wrote one apology to its token cap) is stopped the same way."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

#: Words in a row that, copied from the instructions, make a reply an echo of them.
ECHO_WORDS = 8
_FENCE = re.compile(r"<<<(?:END )?MEMORY\b")
_FENCES = ("<<<MEMORY", "<<<END MEMORY")
_FENCED = re.compile(r"<<<MEMORY (\w+)>>>.*?<<<END MEMORY \1>>>", re.DOTALL)
_WORD = re.compile(r"[a-z0-9']+")
#: A memory line as memory/block.py renders it: `- [kind] ` or `- [kind/topic] ` at a line start
_BLOCK_LINE = re.compile(r"^[ \t]*- \[[a-z_]+(?:/[a-z_]+)?\] ", re.MULTILINE)
#: What may still become such a line (held back until the line says)
_BLOCK_LINE_START = re.compile(r"[ \t]*(?:-(?: (?:\[(?:[a-z_]+(?:/[a-z_]*)?\]?)?)?)?)?")
#: A run of words said this many times in a row is a loop, not an answer
LOOP_COPIES = 3
#: ... and its copies make LOOP_COPIES times this many words ("no, no, no" is an answer; a
#: short run is a loop once said often enough)
LOOP_WORDS = 4
#: what `EchoGuard.echoed` says of a reply that repeats itself
ITS_OWN_WORDS = "its own words"
USE_A_CHAT_MODEL = "use an instruction-tuned chat model (for example qwen2.5:7b or llama3.2:3b)"


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1)}


def _instructions(system: str, tools: Sequence[dict[str, Any]] | None) -> tuple[set, set]:
    rules = _shingles(_FENCED.sub(" ", system))
    return rules, _shingles(json.dumps(list(tools))) if tools else set()


def repeated_instructions(
    reply: str, system: str, tools: Sequence[dict[str, Any]] | None = None
) -> str | None:
    """What of the agent's instructions a whole `reply` repeats ("the memory fence", "the
    system prompt", "the tool schemas"), as `EchoGuard` judges it while one streams; None."""
    guard = EchoGuard(system, tools)
    guard.feed(reply)
    guard.finish()
    return None if guard.echoed == ITS_OWN_WORDS else guard.echoed


class EchoGuard:
    """Watches a streaming reply for a copy of the instructions: `feed` returns what may be shown
    now (all but the last ECHO_WORDS - 1 words, which may start a copy); once `echoed` says what
    was repeated, the text before the copy is released and nothing after it."""

    def __init__(self, system: str, tools: Sequence[dict[str, Any]] | None = None) -> None:
        self._rules, self._schemas = _instructions(system, tools)
        self._text = ""
        self._shown = 0  # text[:shown] was released
        self._checked = 0  # words whose shingle (ending there) was checked
        self.echoed: str | None = None

    def feed(self, piece: str) -> str:
        if self.echoed is not None:
            return ""
        tail_from = max(0, len(self._text) - len(_FENCES[1]))
        self._text += piece
        if found := _FENCE.search(self._text, tail_from):
            return self._copied("the memory fence", found.start())
        line_from = self._text.rfind("\n", 0, tail_from) + 1
        if found := _BLOCK_LINE.search(self._text, line_from):
            return self._copied("the memory lines", found.start())
        every = list(_WORD.finditer(self._text.lower()))
        # a word the text ends in may go on in the next piece: judged once it is whole
        words = every[:-1] if every and every[-1].end() == len(self._text) else every
        if (start := self._scan(words)) is not None:
            return self._copied(self.echoed or "", start)
        if (start := _loop_start(words)) is not None:
            return self._copied(ITS_OWN_WORDS, start)
        safe = every[0].start() if every else len(self._text)
        if words:  # a copy may start at any of the last ECHO_WORDS - 1 whole words
            safe = words[max(0, len(words) - (ECHO_WORDS - 1))].start()
        tail = self._text[-len(_FENCES[1]) :].upper()
        for fence in _FENCES:  # the text may end inside a fence: hold that part
            for k in range(len(fence) - 1, 0, -1):
                if tail.endswith(fence[:k]):
                    safe = min(safe, len(self._text) - k)
                    break
        line = self._text.rfind("\n", 0, safe) + 1  # the line may still become a memory line
        if _BLOCK_LINE_START.fullmatch(self._text, line, safe):
            safe = line
        return self._release(safe)

    def finish(self) -> str:
        """The end of the reply: what was held back, unless the reply became a copy."""
        if self.echoed is not None:
            return ""
        if (start := self._scan(list(_WORD.finditer(self._text.lower())))) is not None:
            return self._copied(self.echoed or "", start)
        return self._release(len(self._text))

    def _scan(self, words: list[re.Match[str]]) -> int | None:
        """Where a copy of the rules or tool schemas starts among the words not yet judged
        (`echoed` then says which), or None."""
        for end in range(max(self._checked + 1, ECHO_WORDS), len(words) + 1):
            shingle = tuple(m.group() for m in words[end - ECHO_WORDS : end])
            if shingle in self._rules:
                self.echoed = "the system prompt"
            elif shingle in self._schemas:
                self.echoed = "the tool schemas"
            if self.echoed is not None:
                return words[end - ECHO_WORDS].start()
        self._checked = max(self._checked, len(words))
        return None

    def _copied(self, what: str, start: int) -> str:
        """The reply became a copy at `start`: what was held before it may still be shown."""
        self.echoed = what
        return self._release(start)

    def _release(self, upto: int) -> str:
        out = self._text[self._shown : upto] if upto > self._shown else ""
        self._shown = max(self._shown, upto)
        return out


def _loop_start(words: list[re.Match[str]]) -> int | None:
    """Where the last copy starts when the words end in one run said LOOP_COPIES times in a row
    and LOOP_COPIES * LOOP_WORDS words long in all (the copies before it stay shown), or None."""
    said = [m.group() for m in words]
    for size in range(1, len(said) // LOOP_COPIES + 1):
        if said[-1] != said[-1 - size]:  # the cheap test first: most sizes end here
            continue
        last, copies = said[len(said) - size :], 1
        while (copies + 1) * size <= len(said) and (
            said[len(said) - size * (copies + 1) : len(said) - size * copies] == last
        ):
            copies += 1
        if copies >= LOOP_COPIES:
            # the shortest run that repeats decides: "then I rested" three times is no loop,
            # "heart rate" on a line of its own six times (Gemma 3 270M, to its cap) is
            if copies * size < LOOP_COPIES * LOOP_WORDS:
                return None
            first = words[len(said) - size]
            start = first.start()  # the copy's "<" of "<heart_rate>" goes with it
            while start and not first.string[start - 1].isspace():
                start -= 1
            return start
    return None
