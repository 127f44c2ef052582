"""One turn's model rounds: the prompt fitted to the window, the answer streamed, tools run.

The prompt is planned again before every request (`agent.budget`), from the model's profile
(docs/agent.md, "Small, thinking and tool-less models")."""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator, Sequence
from functools import partial
from typing import Any

from agent.budget import (
    SLACK,
    ContextFullError,
    Fit,
    MessageTooLongError,
    fit_request,
    offered_tools,
    tool_name,
)
from agent.config import AgentSettings
from agent.echo import ITS_OWN_WORDS, USE_A_CHAT_MODEL, EchoGuard
from agent.errors import ToolsNotSupportedError
from agent.knowing import UNKNOWN_RULE
from agent.llm import LLM, LLMChunk, ToolCall, close_stream
from agent.profile import ModelProfile
from agent.prompt import render_memory_block, system_rules
from agent.speed import Speed, speed_text
from agent.tools.memory_tools import MemoryToolkit
from agent.tools.registry import ToolContext, ToolRegistry, result_for_model
from agent.tools.text_calls import TextCallFilter, parse_text_tool_calls
from agent.turn_state import AnswerState, TurnState
from agent.types import (
    BudgetSplit,
    PromptEvent,
    StatusEvent,
    StoredEvent,
    ThinkingEvent,
    TokenEvent,
    ToolCallRecord,
    ToolEndEvent,
    ToolStartEvent,
    TurnEvent,
    WindowReport,
)
from memory.block import profile_tokens
from memory.models import MemoryContext
from memory.tokens import truncate_to_tokens

log = logging.getLogger(__name__)

#: Most a model's plans are scaled up after a count above the plan (a runaway guard).
MAX_SCALE = 3.0
#: Fewest tokens a model is taken to read per planned token (a prefix the server had cached can
#: make one count tiny; the next prompt, with a new fence, is mostly read anew).
MIN_READ_RATIO = 0.5

CAP_NOTE = (
    "The tool-call limit for this answer is reached. Answer now with the results you have, "
    "and say briefly if something could not be looked up."
)
EMPTY_REPLY = "(The model returned an empty answer.)"
#: The reply budget ran out before the model wrote a word: it was writing something too long to
#: finish (a tool call whose arguments do not fit, or thoughts); the call never runs.
CUT_REPLY = (
    "(No answer: the model used all {tokens:,} tokens kept for its answer before writing any "
    "text, on a tool call or thoughts too long to finish, so nothing was done. Ask for less at "
    "once, or raise AGENT_REPLY_TOKENS.)"
)
#: The reply copied the agent's instructions: it is not shown (a base model continues its prompt);
#: ECHO_AFTER when it began with words of its own, which stay.
ECHO_REPLY = (
    "(No answer: {model} started repeating its instructions ({what}) instead of answering, so "
    "that text is not shown. A base model does that, not a chat model: {advice}.)"
)
ECHO_AFTER = (
    "({model} went on to repeat its instructions ({what}), so that part is not shown. A base "
    "model does that, not a chat model: {advice}.)"
)
#: The reply said the same words again and again: it is stopped where the loop began to repeat.
LOOPED = "({model} began repeating itself, so its reply was stopped here.)"
#: How the status box's line for a prompt planned shorter for a slow reader begins.
SHORTENED = "The prompt was shortened for a slow model"
NO_TOOLS_NOTE = (
    "This model cannot call tools, so no live data can be looked up in this conversation. "
    "Answer from the remembered data; for numbers about workouts, heart rate, sleep or weight, "
    "say that they need a tool-capable model (for example qwen2.5:7b)."
)


def _shrink_exchange(exchange: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results cut to a few hundred tokens each, so an answer from them still fits."""
    out = []
    for m in exchange:
        if m.get("role") == "tool":
            m = {**m, "content": truncate_to_tokens(str(m.get("content") or ""), 300)}
        out.append(m)
    return out


#: The longest rule a turn may add (agent.knowing), planned for when a message is checked, so
#: a turn never refuses what the check let through.
TURN = (UNKNOWN_RULE,)


class Answerer:
    """The model side of a turn. Thread-safe: one instance serves every user and session."""

    def __init__(
        self, llm: LLM, registry: ToolRegistry, config: AgentSettings, memory_prompt_tokens: int
    ) -> None:
        self.llm = llm
        self.registry = registry
        self.config = config
        self.memory_prompt_tokens = memory_prompt_tokens
        self._no_tools: set[str] = set()  # models that answered "does not support tools"
        #: Per model, how much the server's prompt count exceeded the plan (>= 1): prompts are
        #: planned that much smaller from then on (the estimate can fall short on languages
        #: and words a tokenizer splits finely; see memory/tokens.py).
        self._scale: dict[str, float] = {}
        #: Per model, the tokens the server read per planned token (its count / the plan, each
        #: new one weighing half): the estimate errs high (SmolLM2 read ~0.77 of the plan), so a
        #: slow reader's reading time is planned from what it read.
        self._read_ratio: dict[str, float] = {}

    def thinks(self, profile: ModelProfile | None) -> bool:
        return self.config.think and profile is not None and profile.thinking

    def can_use_tools(self, model: str, profile: ModelProfile | None) -> bool:
        """The model can call tools: not known to lack them (a server that lists no
        capabilities says nothing; a 400 "does not support tools" is remembered)."""
        known_without = profile is not None and not profile.tools
        return len(self.registry) > 0 and model not in self._no_tools and not known_without

    def budget(self, profile: ModelProfile | None) -> int:
        """The configured reply budget: AGENT_REPLY_TOKENS (+ thoughts)."""
        return self.config.reply_tokens + (self.config.think_tokens if self.thinks(profile) else 0)

    def reply_reserve(self, model: str, profile: ModelProfile | None) -> int:
        """The reply's room in the window: the budget, or for a slow model what it writes in
        about AGENT_REPLY_SECONDS after reading a prompt like its last one (each request's own
        prompt then sets its num_predict: `time_cap`)."""
        speed = self.llm.speed(model)
        budget = self.budget(profile)
        if speed is None:
            return budget
        return speed.reply_cap(speed.prompt_tokens, budget, self.config.reply_seconds)

    def read_room(self, model: str) -> int | None:
        """The most planned prompt tokens `model` reads with a short reply still written in
        about AGENT_REPLY_SECONDS (agent.budget plans a slow reader's prompt for it); None: no
        limit known."""
        speed = self.llm.speed(model)
        room = None if speed is None else speed.prompt_room(self.config.reply_seconds)
        return None if room is None else int(room / self.read_ratio(model))

    def read_ratio(self, model: str) -> float:
        """Tokens `model` reads per planned token: measured, else the plans' scale."""
        return self._read_ratio.get(model, self.scale(model))

    def shortened_note(self, model: str, speed: Speed, split: BudgetSplit) -> str:
        """For the status box: the prompt was planned shorter than the window allows, because
        the model would take too long to read it."""
        left = [
            f"{n} {one if n == 1 else many}"
            for n, one, many in (
                (split.history_dropped, "older message", "older messages"),
                (split.memories_omitted, "memory", "memories"),
            )
            if n
        ]
        return (
            f"{SHORTENED}: {model} reads about {speed_text(1 / speed.read_s)}, so it was sent "
            f"without {' and '.join(left)} to answer in about {self.config.reply_seconds:g} s. "
            "Your profile's health lines and your message are always sent. Raise "
            "AGENT_REPLY_SECONDS to send more (answers then take longer), or use a faster model."
        )

    def speed_note(self, model: str, speed: Speed, prompt_tokens: int, cap: int) -> str:
        """For the status box: the slow model's speed and what it does to the answer."""
        read_s = speed.reply_seconds(prompt_tokens, 0)
        target, total = self.config.reply_seconds, speed.reply_seconds(prompt_tokens, cap)
        return (
            f"{model} writes {speed_text(speed.tokens_per_s)}"
            + (f" and takes about {read_s:.0f} s to read its prompt" if read_s >= 1 else "")
            + f", so answers are kept to {cap:,} tokens "
            + (
                f"(about {target:g} s in all)"
                if total <= target + 1
                # the rules and the message alone take longer to read: say what it costs
                else f"(about {total:.0f} s in all: more than {target:g} s even so)"
            )
        )

    def time_cap(
        self, model: str, profile: ModelProfile | None, plan: Fit, answer: AnswerState
    ) -> Generator[TurnEvent, None, float | None]:
        """Fit the request's reply (plan.split.reply, sent as num_predict) to
        AGENT_REPLY_SECONDS with this prompt, and say so once a turn. Returns the time limit of
        a model never measured (stopped after about that long), else None."""
        speed = self.llm.speed(model)
        if speed is None:
            return self.config.reply_seconds
        prompt = round(plan.split.prompt * self.read_ratio(model))
        cap = speed.reply_cap(prompt, self.budget(profile), self.config.reply_seconds)
        plan.split.reply = min(plan.split.reply, cap)
        said = []
        if cap < self.budget(profile) and answer.slow is None:
            answer.slow = self.speed_note(model, speed, prompt, cap)
            said.append(answer.slow)
        if plan.split.read_cap is not None and not any(
            n.startswith(SHORTENED) for n in answer.limits
        ):
            answer.limits.append(self.shortened_note(model, speed, plan.split))
            said.append("its prompt shortened to be read in time")
        if said:
            yield StatusEvent(text=f"Thinking… ({'; '.join(said)})")
        return None

    def scale(self, model: str) -> float:
        return self._scale.get(model, 1.0)

    def message_fits(self, message: str, model: str) -> str | None:
        """None when `message` fits the model's window with the rules (and the tool schemas,
        or without them when they cannot fit); else the refusal to show. Planned with a slack
        for the notes a turn's memory block may carry, so a turn never refuses what this let
        through."""
        profile = self.llm.profile(model)
        t = TurnState("_", "_", message, model)
        t.ctx = MemoryContext(user_id="_", session_id="_", query=message)
        t.block.nonce, t.answer.rules = "0" * 8, list(TURN)  # a fixed nonce: the same plan
        refusal = None
        for use in [True, False] if self.can_use_tools(model, profile) else [False]:
            try:
                self._fit(t, profile, use, use, [], SLACK)
                return None
            except MessageTooLongError as e:
                refusal = str(e)
        return refusal

    def _fit(
        self,
        t: TurnState,
        profile: ModelProfile | None,
        tools: bool,
        send_schemas: bool,
        exchange: list[dict[str, Any]],
        slack: int = 0,
    ) -> Fit:
        """Plan one request of `t`. `tools`: the system text says which tools the model has
        (those offered for the window); `send_schemas`: this request carries their schemas (not
        on the capped last round)."""
        model, ctx = t.model, t.ctx
        num_ctx = self.llm.window(model)
        every = self.registry.schemas()
        offered = (
            offered_tools(num_ctx, every, self.may_need(t.message, ctx), self.scale(model))
            if tools
            else []
        )
        names = [tool_name(s) for s in offered]
        return fit_request(
            num_ctx=num_ctx,
            reply_reserve=self.reply_reserve(model, profile),
            memory_cap=self.memory_prompt_tokens,
            system_messages=self._system_texts(tools, names, t.answer.rules),
            tool_schemas=offered if send_schemas else [],
            tools_left_out=len(every) - len(offered) if tools else 0,
            message=t.message,
            exchange=exchange,
            history=t.history,
            render_block=lambda budget: render_memory_block(
                ctx, stored_now=t.stored, budget_tokens=budget, nonce=t.block.nonce
            ),
            profile_tokens=profile_tokens(ctx.profile),
            scale=self.scale(model),
            slack=slack,
            read_tokens=self.read_room(model),
        )

    def may_need(self, message: str, ctx: MemoryContext) -> set[str]:
        """The tools offered on a window too small for all of them: the memory tools (the
        rules tell the model to remember and forget with them), the tools of the procedure
        that matches the message and the tools the message names ("compare_periods", or
        "compare periods")."""
        lowered = message.lower()
        procedure = ctx.procedural.tool_sequence if ctx.procedural is not None else []
        return {
            name
            for name in self.registry.names()
            if self.registry.toolkit_of(name) == MemoryToolkit.name
            or name in procedure
            or name in lowered
            or name.replace("_", " ") in lowered
        }

    def _system_texts(
        self, tools: bool, names: Sequence[str], rules: Sequence[str] = ()
    ) -> list[str]:
        """The system messages of a chat request, the memory block left out (it follows the
        first one). `tools`: the model can call tools in this conversation, `names` those
        offered; `rules`: this turn's own (agent.knowing)."""
        if tools:
            return [system_rules(tool_names=names, turn_rules=rules)]
        texts = [system_rules(turn_rules=rules)]
        if len(self.registry):
            texts.append(NO_TOOLS_NOTE)
        return texts

    def answer(
        self, t: TurnState, tctx: ToolContext
    ) -> Generator[TurnEvent, None, tuple[str, bool]]:
        """Stream the model's answer to `t`'s message, running tools. Before every request the
        prompt is refitted to the window (the tool results of this turn take room). Returns
        (reply, hit_cap) via StopIteration; thoughts, the fit and the report land in `t.answer`."""
        model, answer, records = t.model, t.answer, t.records
        profile = self.llm.profile(model)
        report = answer.report
        fit = partial(self._fit, t, profile)
        use_tools = yield from self._tools_for_turn(model, profile, fit, report)
        think = self.thinks(profile)
        exchange: list[dict[str, Any]] = []  # this turn's tool calls, results and notes
        cap = self.config.max_tool_iterations
        round_no = 0
        while True:
            final_round = round_no == cap
            if final_round and exchange[-1:] != [{"role": "system", "content": CAP_NOTE}]:
                exchange.append({"role": "system", "content": CAP_NOTE})
            plan, exchange, final_round = self._plan_round(
                fit, use_tools, final_round, exchange, report
            )
            if answer.first_fit is None:
                answer.first_fit = plan
            answer.fit = plan
            time_limit = yield from self.time_cap(model, profile, plan, answer)
            yield PromptEvent(memory_block=plan.block.text, memory_block_tokens=plan.block.tokens)
            report.split = plan.split
            report.rounds = round_no + 1
            messages = self._request_messages(plan, t.message, exchange)
            options = {
                "temperature": self.config.temperature,
                "num_ctx": plan.split.num_ctx,
                "num_predict": plan.split.reply,
            }
            try:
                content, calls, done = yield from self._stream_round(
                    model, messages, plan.tools or None, options, think, answer, time_limit
                )
            except ToolsNotSupportedError:
                if not use_tools or "".join(answer.parts):
                    raise
                # A model that turned out not to support tools (e.g. gemma): the same round
                # again without them; it answers from memory alone and is not offered them again.
                log.info("model %s does not support tools; answering without them", model)
                self._no_tools.add(model)
                use_tools, answer.first_fit = False, None
                yield StatusEvent(text=f"{model} cannot call tools: answering from memory only")
                continue
            self._note_report(model, report, plan, done, answer)
            if answer.echoed is not None:
                said = "".join(answer.parts).strip()
                note = (
                    LOOPED.format(model=model)
                    if answer.echoed == ITS_OWN_WORDS
                    else (ECHO_AFTER if said else ECHO_REPLY).format(
                        model=model, what=answer.echoed, advice=USE_A_CHAT_MODEL
                    )
                )
                answer.parts.append(f"\n\n{note}" if said else note)
                yield TokenEvent(text=answer.parts[-1])
                break
            if not calls or final_round:
                break
            yield from self._run_tools(content, calls, exchange, records, tctx)
            round_no += 1
        hit_cap = len(records) > 0 and round_no == cap
        reply = "".join(answer.parts).strip()
        if not reply and report.done_reason == "length" and answer.fit is not None:
            reply = CUT_REPLY.format(tokens=answer.fit.split.reply)
        return reply or EMPTY_REPLY, hit_cap

    def _tools_for_turn(
        self,
        model: str,
        profile: ModelProfile | None,
        fit: Callable[[bool, bool, list[dict[str, Any]]], Fit],
        report: WindowReport,
    ) -> Generator[TurnEvent, None, bool]:
        """Whether this turn offers tools: the model can call them and their schemas fit its
        window (else it answers without tools rather than refuse, and the user is told)."""
        use_tools = self.can_use_tools(model, profile)
        if use_tools:
            try:
                fit(True, True, [])
            except MessageTooLongError:
                # The schemas do not fit this window: answer without tools rather than refuse.
                use_tools = False
                report.notes.append(
                    f"The model's window ({self.llm.window(model):,} tokens) is too small for "
                    "the tool schemas as well: it answered without tools. Raise AGENT_NUM_CTX "
                    "if the model allows."
                )
        if len(self.registry) and not use_tools:
            why = "its window is too small for them" if report.notes else "it cannot call tools"
            yield StatusEvent(text=f"{model} answers without tools ({why}): from memory only")
        return use_tools

    @staticmethod
    def _plan_round(
        fit: Callable[[bool, bool, list[dict[str, Any]]], Fit],
        use_tools: bool,
        final_round: bool,
        exchange: list[dict[str, Any]],
        report: WindowReport,
    ) -> tuple[Fit, list[dict[str, Any]], bool]:
        """(plan, exchange, final_round) of one round. When this turn's tool results fill the
        window, the round becomes the last one: the model answers from them (cut down, or only
        the note to answer now, if need be) without more tool calls."""
        try:
            return fit(use_tools, use_tools and not final_round, exchange), exchange, final_round
        except ContextFullError:
            pass
        # The history is trimmed as usual; the tool results give way next.
        report.notes.append(
            "This turn's tool results filled the model's window: it answered without "
            "more tool calls."
        )
        if exchange[-1].get("content") != CAP_NOTE:
            exchange.append({"role": "system", "content": CAP_NOTE})
        try:
            return fit(use_tools, False, exchange), exchange, True
        except ContextFullError:
            exchange = _shrink_exchange(exchange)
        try:
            return fit(use_tools, False, exchange), exchange, True
        except ContextFullError:  # keep only the note to answer now
            exchange = [{"role": "system", "content": CAP_NOTE}]
            return fit(use_tools, False, exchange), exchange, True

    def _run_tools(
        self,
        content: str,
        calls: list[ToolCall],
        exchange: list[dict[str, Any]],
        records: list[ToolCallRecord],
        tctx: ToolContext,
    ) -> Generator[TurnEvent, None, None]:
        """Run the round's tool calls; the calls and their results join the exchange."""
        exchange.append(
            {
                "role": "assistant",
                "content": content,
                "tool_calls": [
                    {
                        "function": {
                            "name": c.name,
                            "arguments": c.arguments if isinstance(c.arguments, dict) else {},
                        }
                    }
                    for c in calls
                ],
            }
        )
        for call in calls:
            yield ToolStartEvent(text=call.name, name=call.name, arguments=call.arguments)
            n_stored = len(tctx.stored)
            rec = self.registry.execute(call.name, call.arguments, tctx)
            records.append(rec)
            yield ToolEndEvent(text=call.name, record=rec)
            for m in tctx.stored[n_stored:]:
                yield StoredEvent(text=m.text, memory=m)
            result_text = result_for_model(rec)
            if tctx.grounding_texts is not None and rec.error is None:
                # "Remember that" after a lookup: the user's own data supports it too.
                tctx.grounding_texts.append(result_text)
            exchange.append({"role": "tool", "content": result_text, "tool_name": call.name})

    @staticmethod
    def _request_messages(
        fit: Fit, message: str, exchange: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        texts = list(fit.system)
        texts[0] = texts[0] + "\n" + fit.block.text
        return [
            *({"role": "system", "content": t} for t in texts),
            *({"role": m.role, "content": m.content} for m in fit.window),
            {"role": "user", "content": message},
            *exchange,
        ]

    def _stream_round(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        options: dict[str, Any],
        think: bool,
        answer: AnswerState,
        time_limit: float | None = None,
    ) -> Generator[TurnEvent, None, tuple[str, list[ToolCall], LLMChunk]]:
        """One model request. A tool call written as text is held until the answer ends, then run
        or shown as it was; the last words are held until they cannot start a copy of the
        instructions, and a reply that turns into one is stopped (`answer.echoed`)."""
        content = ""
        calls: list[ToolCall] = []
        done = LLMChunk(done=True)
        held = TextCallFilter() if tools else None
        system = "\n".join(str(m["content"]) for m in messages if m.get("role") == "system")
        echo = EchoGuard(system, tools)
        chunks = self.llm.stream_chat(
            model, messages, tools=tools, options=options, think=think, time_limit_s=time_limit
        )
        try:
            for chunk in chunks:
                if chunk.thinking:
                    answer.thinking.append(chunk.thinking)
                    yield ThinkingEvent(text=chunk.thinking)
                if chunk.content:
                    content += chunk.content
                    yield from self._show(echo.feed(chunk.content), held, answer)
                    if echo.echoed is not None:
                        break
                if chunk.done:
                    calls, done = list(chunk.tool_calls), chunk
        finally:
            # Closing this turn (a stopped answer) closes the model's stream at once: the
            # request to Ollama ends instead of generating on for nobody.
            close_stream(chunks)
        if echo.echoed is None:
            yield from self._show(echo.finish(), held, answer)
        if echo.echoed is not None:
            answer.echoed = echo.echoed
            log.info("model %s repeated %s: its reply was stopped", model, echo.echoed)
            return content, [], done
        if held is not None:
            rest = held.finish()  # what was held back: a call written as text, or not
            offered = [tool_name(t) for t in tools or []]
            parsed = (
                None
                if calls or not rest
                else parse_text_tool_calls(rest, self._validators(offered))
            )
            if parsed is not None and parsed.calls:
                calls = list(parsed.calls)
                log.info("model %s wrote %d tool call(s) as text", model, len(calls))
                yield StatusEvent(text=f"{model} wrote a tool call as text: running it")
                # The call's text is not an answer: only the prose around it is shown.
                shown_before = content[: len(content) - len(rest)]
                content = (shown_before + parsed.prose).strip()
                if parsed.prose:
                    answer.parts.append(parsed.prose)
                    yield TokenEvent(text=parsed.prose)
            elif rest:
                answer.parts.append(rest)
                yield TokenEvent(text=rest)
        return content, calls, done

    @staticmethod
    def _show(text: str, held: TextCallFilter | None, answer: AnswerState) -> Iterator[TurnEvent]:
        """Text that passed the echo guard, shown unless it may be a tool call written as text
        (then `held` keeps it until the answer ends)."""
        shown = held.feed(text) if held is not None and text else text
        if shown:
            answer.parts.append(shown)
            yield TokenEvent(text=shown)

    def _validators(self, names: Sequence[str]) -> dict[str, Callable[[Any], Any]]:
        return {name: partial(self.registry.validate, name) for name in names}

    def _note_report(
        self, model: str, report: WindowReport, fit: Fit, done: LLMChunk, answer: AnswerState
    ) -> None:
        """What the server said about the request, against what was planned; a count above
        the plan makes later plans for this model smaller by as much."""
        report.done_reason = done.done_reason
        report.prompt_eval_count = done.prompt_eval_count
        expected = fit.split.prompt * fit.split.scale
        count = done.prompt_eval_count
        if count and fit.split.prompt > 0:
            seen = min(MAX_SCALE, max(MIN_READ_RATIO, count / fit.split.prompt))
            old = self._read_ratio.get(model)
            self._read_ratio[model] = seen if old is None else (old + seen) / 2
        if done.done_reason == "length":
            report.notes.append(
                f"The answer stopped at the token limit ({fit.split.reply:,} tokens kept for it "
                f"in a {fit.split.num_ctx:,}-token window): it may be cut short."
            )
            limit = f"The answer was cut at its {fit.split.reply:,}-token cap: " + (
                f"{answer.slow}. Ask for less at once, or use a faster model."
                if answer.slow
                else "ask for less at once, or raise AGENT_REPLY_TOKENS."
            )
            if limit not in answer.limits:
                answer.limits.append(limit)
        if done.done_reason == "time":
            limit = (
                f"The answer was stopped after about {self.config.reply_seconds:g} s: {model}'s "
                "speed was not measured yet. Later answers are kept to what it reads and writes "
                "in that time; ask for less at once, or use a faster model."
            )
            if limit not in answer.limits:
                answer.limits.append(limit)
        if count is not None and count >= fit.split.num_ctx - 4:
            report.notes.append(
                f"The server counted {count:,} prompt tokens, the whole window: Ollama may have "
                "cut the prompt, so the model may not have seen all of it."
            )
        if count is not None and count > expected and fit.split.prompt > 0:
            scale = min(MAX_SCALE, count / fit.split.prompt * 1.05)
            self._scale[model] = max(self.scale(model), scale)
            report.notes.append(
                f"The server counted {count:,} prompt tokens, more than the {round(expected):,} "
                f"planned: the estimate fell short for this text, so prompts for {model} are "
                f"planned {self._scale[model]:.2f}x larger from now on."
            )
