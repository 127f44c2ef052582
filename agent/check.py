"""`python -m agent check`: can this model do what the agent asks of it? Short probes, measured,
with the agent's own window, prompts and tool schemas; nothing is stored. Every finding says
what the agent does about it (docs/agent.md, "Checking your model")."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from pydantic import BaseModel, Field

from agent.config import AgentSettings
from agent.echo import USE_A_CHAT_MODEL, repeated_instructions
from agent.errors import ExtractionError, LLMError, ToolsNotSupportedError
from agent.extraction import LLMExtractor
from agent.llm import LLM, ToolCall
from agent.profile import ModelProfile
from agent.prompt import build_system_prompt, render_memory_block
from agent.tools.registry import ToolRegistry
from agent.tools.text_calls import parse_text_tool_calls
from memory.models import MemoryContext, MemoryType, RecallHit, ScoreParts
from memory.stores.episodic import interaction_context
from memory.text import words
from memory.writing import check_grounded

EXTRACTION_PROBE = "I'm vegetarian and I run 5k every Saturday morning."
REMEMBER_PROBE = "Please remember that my sister's name is Ines."
SMALL_TALK_PROBE = "hello there, I'm just saying hi"
MEMORY_PROBE = ("My dog is called Biscuit", "What is my dog called?", "biscuit")
#: (the user's earlier message, what was answered, the question now, the word to find)
ANSWER_PROBE = (
    "Can you suggest a name for my new kitten?",
    "How about Pepper? It suits a lively kitten.",
    "Which name did you suggest for my kitten?",
    "pepper",
)
THINK_PROBE = "What is 17 + 25? Answer with the number."

#: Cap of a probe's answer (num_predict): a short answer or one tool call fits easily; a
#: thinking probe adds AGENT_THINK_TOKENS.
CHECK_REPLY_TOKENS = 256
#: The longest one probe request may run.
CHECK_TIME_LIMIT_S = 60.0


class InstructionEcho(Exception):
    """The reply repeats the agent's own instructions."""


class NeverStops(Exception):
    """The reply to a short question ran to its cap."""


class Probe(BaseModel):
    name: str
    passed: bool
    detail: str
    ms: float = Field(description="Wall time of the probe's request(s)")


class CheckReport(BaseModel):
    model: str
    context_length: int | None = Field(description="The model's trained context (/api/show)")
    num_ctx: int = Field(description="The window the agent sends and plans for")
    capabilities: list[str]
    probes: list[Probe]
    recommendations: list[str]


def _timed(fn: Callable[[], tuple[bool, str]]) -> tuple[bool, str, float]:
    t0 = time.perf_counter()
    try:
        passed, detail = fn()
    except ToolsNotSupportedError as e:
        passed, detail = False, f"cannot call tools ({e})"
    except (LLMError, ExtractionError) as e:
        passed, detail = False, f"failed: {e}"
    except (InstructionEcho, NeverStops) as e:
        passed, detail = False, str(e)
    return passed, detail, round((time.perf_counter() - t0) * 1000, 1)


class ModelCheck:
    def __init__(self, llm: LLM, registry: ToolRegistry, config: AgentSettings) -> None:
        self.llm = llm
        self.registry = registry
        self.config = config
        self.findings: dict[str, Any] = {}

    def run(self, model: str) -> CheckReport:
        profile = self.llm.profile(model, refresh=True)
        num_ctx = self.llm.window(model)
        probes: list[Probe] = []
        steps: list[tuple[str, Callable[[], tuple[bool, str]]]] = [
            ("context_length", partial(self._context, profile, num_ctx)),
            ("chat_template", partial(self._template, profile)),
            ("json_extraction", partial(self._extraction, model)),
            ("remember_tool_call", partial(self._remember, model, profile)),
            ("no_tool_on_small_talk", partial(self._small_talk, model, profile)),
            ("uses_recalled_memory", partial(self._uses_memory, model)),
            ("uses_earlier_answer", partial(self._uses_answer, model)),
            ("thinking", partial(self._thinking, model, profile)),
        ]
        for name, fn in steps:
            passed, detail, ms = _timed(fn)
            probes.append(Probe(name=name, passed=passed, detail=detail, ms=ms))
        return CheckReport(
            model=model,
            context_length=profile.context_length if profile else None,
            num_ctx=num_ctx,
            capabilities=list(profile.capabilities) if profile else [],
            probes=probes,
            recommendations=self._recommend(profile, num_ctx, {p.name: p for p in probes}),
        )

    # ---- probes ------------------------------------------------------------------------
    def _context(self, profile: ModelProfile | None, num_ctx: int) -> tuple[bool, str]:
        if profile is None or profile.context_length is None:
            return False, f"the server did not say; the agent sends num_ctx {num_ctx:,}"
        return True, (
            f"trained for {profile.context_length:,} tokens; the agent sends num_ctx {num_ctx:,} "
            f"on every request (AGENT_NUM_CTX {self.config.num_ctx:,}"
            + (", capped by the model)" if num_ctx < self.config.num_ctx else ")")
        )

    def _template(self, profile: ModelProfile | None) -> tuple[bool, str]:
        if profile is None or profile.template is None:
            return True, "the server did not show a template"
        if not profile.chat_template:
            self.findings["no_template"] = True
            return False, (
                "no chat template: a base model, which continues text instead of answering; "
                + USE_A_CHAT_MODEL
            )
        return True, "has a chat template"

    def _extraction(self, model: str) -> tuple[bool, str]:
        candidates, attempts = LLMExtractor(self.llm).extract(model, EXTRACTION_PROBE)
        # one fact said five times is one fact (SmolLM2 135M repeated the whole sentence)
        seen: set[tuple[str, ...]] = set()
        texts = []
        for c in candidates:
            key = tuple(words(c.text))
            if key not in seen:
                seen.add(key)
                texts.append(c.text)
        copies = len(candidates) - len(texts)
        invented = [t for t in texts if not check_grounded(t, [EXTRACTION_PROBE]).supported]
        self.findings["invented"] = invented
        grounded = len(texts) - len(invented)
        detail = f"{grounded} supported fact(s) of 2 expected: {texts}" + (
            f"; {len(invented)} not said by the user: {invented}" if invented else ""
        )
        if copies:
            detail += f" ({copies} repeated cop{'y' if copies == 1 else 'ies'} not counted)"
        if attempts > 1:
            detail += f" (valid JSON on attempt {attempts})"
        return grounded >= 2, detail

    def _chat(
        self, model: str, system: str, message: str, tools: bool, think: bool | None = None
    ) -> tuple[str, str, list[ToolCall]]:
        """One bounded probe request. Raises InstructionEcho when the answer repeats the
        instructions, NeverStops when an answer to this short question ran to its cap."""
        content = thinking = ""
        calls: list[ToolCall] = []
        done_reason = None
        schemas = self.registry.schemas() if tools else None
        cap = CHECK_REPLY_TOKENS + (self.config.think_tokens if think else 0)
        for chunk in self.llm.stream_chat(
            model,
            [{"role": "system", "content": system}, {"role": "user", "content": message}],
            tools=schemas,
            options={"temperature": 0, "num_predict": cap},
            think=think,
            time_limit_s=CHECK_TIME_LIMIT_S,
        ):
            content += chunk.content
            thinking += chunk.thinking
            if chunk.done:
                calls = list(chunk.tool_calls)
                done_reason = chunk.done_reason
        echoed = repeated_instructions(content, system, schemas)
        if done_reason == "length" and not calls:
            self.findings["never_stops"] = True
        if echoed is not None:
            self.findings["echo"] = echoed
            raise InstructionEcho(
                f"the model repeats its instructions ({echoed}): is it a chat model? "
                f"Answered: {content[:120]!r}"
            )
        if done_reason == "time":
            raise NeverStops(
                f"still writing after {CHECK_TIME_LIMIT_S:g} s on a short question: it was "
                f"stopped. Answered: {content[:120]!r}"
            )
        if done_reason == "length" and not calls:
            raise NeverStops(
                f"never stopped: wrote to its {cap:,}-token cap on a short question "
                f"(a base model, or a wrong chat template?). Answered: {content[:120]!r}"
            )
        return content, thinking, calls

    def _tool_calls(
        self, model: str, profile: ModelProfile | None, message: str
    ) -> tuple[list[ToolCall], bool, str]:
        """(calls, written as text?, content) of one message with the agent's tools."""
        if profile is not None and not profile.tools:
            raise ToolsNotSupportedError(f"{model} has no tools capability")
        block = render_memory_block(MemoryContext(user_id="check", session_id="check", query=""))
        system = build_system_prompt(block, tool_names=self.registry.names())
        content, _, calls = self._chat(model, system, message, tools=True, think=False)
        if calls:
            return calls, False, content
        validators = {n: partial(self.registry.validate, n) for n in self.registry.names()}
        parsed = parse_text_tool_calls(content, validators)
        return (list(parsed.calls), True, content) if parsed else ([], False, content)

    def _remember(self, model: str, profile: ModelProfile | None) -> tuple[bool, str]:
        calls, as_text, content = self._tool_calls(model, profile, REMEMBER_PROBE)
        names = [c.name for c in calls]
        self.findings["text_calls"] = as_text
        if "remember_information" in names:
            how = "as text (the agent recognises and runs it)" if as_text else "natively"
            return True, f"called remember_information {how}"
        if names:
            return False, f"called {names} instead of remember_information"
        return False, f"no tool call; answered: {content[:120]!r}"

    def _small_talk(self, model: str, profile: ModelProfile | None) -> tuple[bool, str]:
        if profile is not None and not profile.tools:
            return True, "no tools capability: the agent offers it none"
        calls, _, content = self._tool_calls(model, profile, SMALL_TALK_PROBE)
        if calls:
            return False, f"called {[c.name for c in calls]} on small talk"
        return True, f"answered without tools: {content[:80]!r}"

    def _uses_memory(self, model: str) -> tuple[bool, str]:
        fact, question, expected = MEMORY_PROBE
        record = {"event_type": "fact"}
        return self._answers_from(model, fact, record, question, expected, "the remembered fact")

    def _uses_answer(self, model: str) -> tuple[bool, str]:
        message, reply, question, expected = ANSWER_PROBE
        record = {"event_type": "interaction", "context": interaction_context(reply)}
        return self._answers_from(model, message, record, question, expected, "its earlier answer")

    def _answers_from(
        self, model: str, text: str, record: dict, question: str, expected: str, what: str
    ) -> tuple[bool, str]:
        """Ask `question` with one remembered memory (`text`, its stored `record`) in the
        block, as the agent renders it; passed when the answer holds `expected`."""
        hit = RecallHit(
            id="check",
            memory_type=MemoryType.EPISODIC,
            text=text,
            score=0.9,
            band="high",
            parts=ScoreParts(),
            record=record,
        )
        ctx = MemoryContext(user_id="check", session_id="check", query=question, episodic=[hit])
        system = build_system_prompt(render_memory_block(ctx), tool_names=[])
        content, _, _ = self._chat(model, system, question, tools=False, think=False)
        used = expected in content.lower()
        return used, (f"named {what}" if used else "did not use it") + f": {content[:120]!r}"

    def _thinking(self, model: str, profile: ModelProfile | None) -> tuple[bool, str]:
        if profile is None or not profile.thinking:
            return True, "not a thinking model: it answers without thoughts"
        content, thinking, _ = self._chat(model, "Answer briefly.", THINK_PROBE, False, True)
        _, off_thoughts, _ = self._chat(model, "Answer briefly.", THINK_PROBE, False, False)
        ok = bool(thinking.strip()) and bool(content.strip()) and not off_thoughts.strip()
        return ok, (
            f"thoughts {len(thinking)} characters apart from the answer {content.strip()[:40]!r}"
            + ("; thinking off worked" if not off_thoughts.strip() else "; it thought anyway")
        )

    # ---- what the agent does about it --------------------------------------------------
    def _recommend(
        self, profile: ModelProfile | None, num_ctx: int, probes: dict[str, Probe]
    ) -> list[str]:
        out: list[str] = []
        if self.findings.get("no_template"):
            out.append(
                "No chat template: this is a base model, which continues your text instead of "
                f"answering (and copies its prompt); {USE_A_CHAT_MODEL}. On llama.cpp, load a "
                "GGUF that carries a chat template or pass --chat-template."
            )
        if self.findings.get("echo"):
            out.append(
                f"Repeats its instructions ({self.findings['echo']}): is it a chat model? A "
                "reply that copies the prompt is not an answer, and it would show the memory "
                f"block to the user; {USE_A_CHAT_MODEL}."
            )
        if self.findings.get("never_stops"):
            out.append(
                "Never stops on a short question: every answer would run to AGENT_REPLY_TOKENS "
                f"({self.config.reply_tokens:,} tokens). Typical of a base model or a missing "
                f"chat template; {USE_A_CHAT_MODEL}."
            )
        if profile is not None and profile.context_length:
            if profile.context_length < self.config.num_ctx:
                out.append(
                    f"The model's context is {profile.context_length:,} tokens: the agent plans "
                    f"for that, so fewer memories and less history fit; summaries cover what "
                    "leaves the window."
                )
            else:
                out.append(
                    f"Every request sends num_ctx {num_ctx:,}, so Ollama's machine-dependent "
                    "default (4,096 on a CPU) does not apply; raise AGENT_NUM_CTX if your "
                    "memory allows a longer history."
                )
        if not probes["remember_tool_call"].passed:
            out.append(
                "Cannot call tools reliably: memory is written by trigger phrases "
                "('remember: ...') and background extraction only, and live wellness numbers "
                "cannot be looked up. A tool-capable model such as qwen2.5:7b does both."
            )
        elif self.findings.get("text_calls"):
            out.append(
                "Writes tool calls as text: the agent recognises calls to its own tools with "
                "valid arguments and runs them; the raw call is not shown."
            )
        if not probes["no_tool_on_small_talk"].passed:
            out.append("Calls tools on small talk: expect slower answers and extra tool rounds.")
        if not probes["json_extraction"].passed:
            out.append(
                "Extraction is unreliable: use trigger phrases ('remember: ...'), or set "
                "AGENT_LLM_EXTRACTION=off to save the background call."
            )
        if self.findings.get("invented"):
            out.append(
                "Invents facts when extracting: the grounding check drops memories the user "
                "did not say (counted as 'ungrounded' on the Stats page)."
            )
        echo = bool(self.findings.get("echo"))  # said above: an echo uses nothing
        if not probes["uses_recalled_memory"].passed and not echo:
            out.append("Ignored a recalled memory: a larger model will use memory better.")
        if not probes["uses_earlier_answer"].passed and not echo:
            out.append(
                "Did not use its own earlier answer shown in memory: questions about what it "
                "suggested before may not be answered from memory."
            )
        if profile is not None and profile.thinking:
            out.append(
                "A thinking model: thoughts are shown folded in the details, never stored; "
                f"{self.config.think_tokens:,} extra tokens are kept for them. Set "
                "AGENT_THINK=false for faster answers."
            )
        return out
