"""`ChatAgent`: one turn = check the model, recall, extract triggers, answer (tools), learn,
store, queue the extraction (the steps: docs/agent.md, "One turn"). An incognito turn and a
re-answer (agent.private) are this turn given a `Private`. The agent never talks to Redis
itself: everything goes through the memory coordinator."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from agent.answering import Answerer
from agent.background import BackgroundExtractor, ReplyGate
from agent.budget import MessageTooLongError
from agent.check import CheckReport, ModelCheck
from agent.config import AgentSettings
from agent.errors import LLMError, LLMUnavailableError
from agent.extraction import LLMExtractor, talks_about_user
from agent.knowing import judge
from agent.learning import LearningTracker, success_score, tool_sequence
from agent.llm import LLM, OllamaLLM
from agent.prompt import (
    history_window,
    render_memory_block,
    without_notices,
)
from agent.replies import (
    answer_hits,
    in_prompt,
    memory_only_reply,
    recall_status,
    without_offline_notice,
)
from agent.summarising import LLMSummariser, SummaryWorker, dropped_before
from agent.tools.memory_tools import MemoryToolkit
from agent.tools.registry import ToolContext, Toolkit, ToolRegistry
from agent.tools.wellness import WellnessToolkit
from agent.turn_state import Private, TurnState, masked_labels, ms_since
from agent.types import (
    DoneEvent,
    ExtractionOutcome,
    LLMStatus,
    RecallEvent,
    StatusEvent,
    StoredEvent,
    StoredMemory,
    TokenEvent,
    TurnEvent,
    TurnResult,
)
from memory import RecallOptions
from memory.config import Settings
from memory.errors import MemorySystemError
from memory.models import MemoryContext, check_id, check_text
from memory.service import AgentMemory
from memory.writing import (
    Grounding,
    WritePolicy,
    check_grounded,
    extract_triggers,
    mask_secrets,
)

if TYPE_CHECKING:  # the app and the CLI give the maintenance; the agent does not load it
    from memory.maintenance import Maintenance

log = logging.getLogger(__name__)

RECALL_TYPES = ("episodic", "semantic", "procedural", "short_term")
#: A turn that stores nothing, without its model: the reason says what to do (start Ollama,
#: pull the model, wait for it to load).
OFFLINE_REPLY = (
    "The language model is not available: {reason} {what} needs the model; nothing was stored."
)


class ChatAgent:
    """The chat agent. Thread-safe: one instance serves every user and session.

    `toolkits`: the pluggable domain toolkits (default: the synthetic wellness toolkit; pass
    `[]` for none). The memory tools are always registered.
    """

    def __init__(
        self,
        settings: Settings,
        coordinator: AgentMemory,
        toolkits: Iterable[Toolkit] | None = None,
        *,
        agent_settings: AgentSettings | None = None,
        summaries: Maintenance | None = None,
        writer: WritePolicy | None = None,
    ) -> None:
        """`summaries`: where turns that leave the prompt are
        summarised; None = no session summaries. `writer`: the write policy to share with the
        app's editors (one per-user lock for every writer); a new one by default."""
        self.settings = settings
        self.config = agent_settings or AgentSettings()
        self.coordinator = coordinator
        self.llm: LLM = OllamaLLM.from_settings(settings, self.config)
        self.writer = writer or WritePolicy(
            coordinator, dedup_threshold=settings.dedup_threshold, pii_policy=settings.pii_policy
        )
        toolkits = list(
            [WellnessToolkit(seed=self.config.wellness_seed, days=self.config.wellness_days)]
            if toolkits is None
            else toolkits
        )
        self.registry = ToolRegistry(
            [MemoryToolkit(coordinator, self.writer, grounding=self.stated), *toolkits]
        )
        self.learning = LearningTracker(coordinator)
        #: Replies streaming now: a slow model's background extraction waits for them.
        self.replies = ReplyGate()
        self.background = BackgroundExtractor(
            LLMExtractor(self.llm),
            self.writer,
            log_size=self.config.extraction_log_size,
            on_outcome=self._count_extraction,
            grounding=self.stated,
            on_finished=self._extraction_finished,
            gate=self.replies,
            slow=self._slow,
        )
        self.summaries = SummaryWorker(summaries) if summaries is not None else None
        self._status: dict[str, LLMStatus] = {}
        self.answerer = Answerer(
            self.llm, self.registry, self.config, int(settings.memory_prompt_tokens)
        )
        # Turns that store nothing (agent.private) get the tools that only read.
        self.private_answerer = Answerer(
            self.llm, ToolRegistry(toolkits), self.config, int(settings.memory_prompt_tokens)
        )
        self._status_lock = threading.Lock()

    @property
    def default_model(self) -> str:
        return str(self.config.ollama_model)

    # ---- status ------------------------------------------------------------------------
    def status(self, refresh: bool = False, model: str | None = None) -> LLMStatus:
        """Is Ollama up and the model pulled? Cached `status_cache_s` seconds; never raises."""
        model = model or self.default_model
        with self._status_lock:
            cached = self._status.get(model)
        if (
            not refresh
            and cached is not None
            and time.time() - cached.checked_at < self.config.status_cache_s
        ):
            return cached
        st = self.llm.status(model)
        with self._status_lock:
            self._status[model] = st
        return st

    # ---- background --------------------------------------------------------------------
    def wait_for_background(self, timeout: float | None = None) -> bool:
        """Wait for queued memory extraction and summaries; True when nothing is left."""
        done = self.background.wait(timeout)
        return (self.summaries.wait(timeout) if self.summaries is not None else True) and done

    def grounded(self, claim: str, sources: list[str]) -> Grounding:
        """Does what the user said support a memory a model wrote? (memory/writing/grounding.py; the
        embedding similarity is its second chance for paraphrases)."""
        return check_grounded(claim, sources, similarity=self._similarity)

    def stated(self, claim: str, sources: list[str]) -> Grounding:
        """`grounded`, with what the user asked left out: a fact a model drew from a question
        ("Do I have any food allergies?") is not the user's; "Can you remember that I'm
        vegan?" still states one. For memories a model writes from the user's messages."""
        return check_grounded(claim, sources, similarity=self._similarity, statements_only=True)

    def _similarity(self, a: str, b: str) -> float:
        try:
            return self.coordinator.text_similarity(a, b)
        except MemorySystemError:  # no embedder now: the lexical rules alone decide
            return 0.0

    def _count_extraction(self, status: str) -> None:
        """Extraction outcomes as counters in Redis (`extraction_done`, `_failed`, ...)."""
        self.coordinator.count_event(f"extraction_{status}")

    def close(self) -> None:
        self.background.shutdown()
        if self.summaries is not None:
            self.summaries.shutdown()

    # ---- turns -------------------------------------------------------------------------
    def chat(
        self,
        user_id: str,
        session_id: str,
        message: str,
        *,
        model: str | None = None,
    ) -> TurnResult:
        """Run a turn to the end and return its result."""
        result: TurnResult | None = None
        for ev in self.run_turn(user_id, session_id, message, model=model):
            if isinstance(ev, DoneEvent):
                result = ev.result
        assert result is not None
        return result

    def run_turn(
        self,
        user_id: str,
        session_id: str,
        message: str,
        *,
        model: str | None = None,
        recall_types: Iterable[str] | None = None,
        private: Private | None = None,
    ) -> Iterator[TurnEvent]:
        """Run one turn, yielding events as they happen; the last is `done` with the result.
        `private`: a turn that stores nothing, given its memories (agent.private)."""
        # Validated once, here at the edge: the layers below take the checked ids as they are.
        user_id = check_id(user_id)
        session_id = check_id(session_id, "session id")
        message = check_text(message, "Message")
        types = set(RECALL_TYPES if recall_types is None else recall_types)
        unknown = types - set(RECALL_TYPES)
        if unknown:
            raise ValueError(f"Unknown recall types {sorted(unknown)}; use {RECALL_TYPES}.")
        model = model or self.default_model
        refusal = self.message_fits(message, model)
        if refusal is not None:
            raise MessageTooLongError(refusal)
        return self._turn(user_id, session_id, message, model, types, private)

    # ---- the model ---------------------------------------------------------------------
    def _slow(self, model: str) -> bool:
        """A full reply of `model` would take longer than AGENT_REPLY_SECONDS: its background
        work waits for the replies streaming now."""
        speed = self.llm.speed(model)
        budget = self.answerer.budget(self.llm.profile(model))
        return speed is not None and speed.slow(budget, self.config.reply_seconds)

    def check_model(self, model: str | None = None) -> CheckReport:
        """Short probes of the model (agent/check.py): what it can do and what the agent does
        about it. Nothing is stored."""
        return ModelCheck(self.llm, self.registry, self.config).run(model or self.default_model)

    def message_fits(self, message: str, model: str | None = None) -> str | None:
        """None when `message` can be sent to the model (memories and history are trimmed to
        make room); else the refusal to show, the text kept for the user to shorten. Without
        a reachable model there is no window to fit (memory-only mode answers)."""
        model = model or self.default_model
        if not self.status(model=model).ok:
            return None
        return self.answerer.message_fits(message, model)

    def _turn(
        self,
        user_id: str,
        session_id: str,
        message: str,
        model: str,
        types: set[str],
        private: Private | None,
    ) -> Iterator[TurnEvent]:
        """The steps of one turn, in order (module docstring); `t` carries what they share."""
        # Secrets only (emails and phone numbers follow PII_POLICY where they are stored).
        masked = mask_secrets(message)
        message = masked.text
        t = TurnState(
            user_id, session_id, message, model, masked_at_entry=masked.found, private=private
        )
        yield from self._check_model(t)
        if private is None:
            note = self.learning.observe_message(user_id, session_id, message)
            if note:  # this message corrects the previous answer: its tool pattern was scored down
                yield StatusEvent(text=note)
            with t.timed("recall"):  # before the model sees anything
                t.ctx = self._recall(t, types)
            yield RecallEvent(text=recall_status(t.ctx), context=t.ctx)
            with t.timed("triggers"):
                yield from self._store_triggers(t)
        else:  # given, not recalled; nothing of it is stored
            t.ctx, t.saved = private.context.model_copy(update={"query": message}), False
            yield RecallEvent(
                text=f"{private.kind}: {len(t.ctx.episodic)} about you", context=t.ctx
            )
        self._plan_prompt(t)
        with t.timed("answer"), self.replies.replying():
            yield from self._answer_step(t)
        if private is None:
            with t.timed("store"):
                self._store_exchange(t)
        if t.mode == "memory-only":
            if not t.saved and private is None:
                t.reply = t.after_lead(
                    memory_only_reply(t.reason, t.ctx, t.stored, state=t.offline_state, saved=False)
                )
            # The reply is exactly what was streamed: any partial answer, then the notice.
            yield TokenEvent(text=t.reply[len(t.lead) :])
        extraction, summary = self._queue_extraction(t), self._queue_summary(t)
        t.timings["total"] = ms_since(t.started)
        result = self._result(t, extraction, summary)
        if t.saved:
            self._save_details(user_id, session_id, result.turn_id, result.for_storage())
        yield DoneEvent(text=t.reply, result=result)

    def _save_details(
        self, user_id: str, session_id: str, turn_id: str, data: dict[str, Any], part: str = ""
    ) -> None:
        """Kept beside the answer; a failure only costs the details after a reload."""
        try:
            self.coordinator.save_turn_details(user_id, session_id, turn_id, data, part=part)
        except (MemorySystemError, ValueError) as e:
            log.warning("could not keep the details of turn %s: %s", turn_id, e)

    def _extraction_finished(self, outcome: ExtractionOutcome) -> None:
        """The background outcome, kept beside the turn's details (shown after a reload)."""
        data = outcome.model_dump(
            mode="json",
            include={"turn_id", "user_id", "session_id", "status", "detail", "stored", "limit"},
        )
        self._save_details(outcome.user_id, outcome.session_id, outcome.turn_id, data, "extraction")

    def turn_details(self, user_id: str, session_id: str) -> dict[str, TurnResult]:
        """turn id -> the details kept for that answer of the session (without thoughts),
        with the background extraction's outcome once known. Raises MemorySystemError."""
        out: dict[str, TurnResult] = {}
        for turn_id, parts in self.coordinator.turn_details(user_id, session_id).items():
            try:
                result = TurnResult.from_storage(parts)
            except ValueError as e:  # kept by another version: not shown rather than a crash
                log.warning("unreadable details of turn %s: %s", turn_id, e)
                continue
            if result is not None:
                out[turn_id] = result
        return out

    def _check_model(self, t: TurnState) -> Iterator[TurnEvent]:
        """Re-checked every turn: a model that went away since the last one is noticed."""
        with t.timed("llm_status"):
            t.status = self.status(refresh=True, model=t.model)
        t.mode = "llm" if t.status.ok else "memory-only"
        if t.private is not None:
            ready = f"Model {t.model} ready ({t.private.kind}: nothing is stored)"
            offline = f"Model not available: {t.status.message}"
        else:
            ready, offline = f"Model {t.model} ready", f"Memory-only mode: {t.status.message}"
        yield StatusEvent(text=ready if t.status.ok else offline, mode=t.mode)

    def _store_triggers(self, t: TurnState) -> Iterator[TurnEvent]:
        """Explicit trigger phrases and #tags, stored now (read-after-write next turn)."""
        for cand in extract_triggers(t.message):
            try:
                res = self.writer.write(t.user_id, t.session_id, cand, context="trigger phrase")
            except MemorySystemError as e:
                t.errors.append(f"could not store {cand.text!r}: {e}")
                continue
            if res.stored is not None:
                stored = _with_entry_labels(res.stored, t.masked_at_entry)
                t.stored.append(stored)
                yield StoredEvent(text=stored.text, memory=stored)
            else:
                said = f"Not stored ({res.reason})"
                if res.duplicate_of:
                    said = res.already_remembered()
                yield StatusEvent(text=f"{said}: {cand.text}")

    def _plan_prompt(self, t: TurnState) -> None:
        """What the prompt may say about the user, the memory block and the history."""
        # A question about the user that nothing clears the moderate band for: weak hits are
        # held back and the model is told it does not know (agent.knowing).
        t.knowing = judge(t.message, t.ctx, t.stored)
        t.ctx = t.knowing.context
        t.answer.rules = t.knowing.rules
        # What was recalled, as the memory-only reply and the result show it; a model turn
        # refits the block and the history to the model's window before every request.
        t.block = render_memory_block(
            t.ctx, stored_now=t.stored, budget_tokens=int(self.settings.memory_prompt_tokens)
        )
        if t.private is not None:
            t.history = t.private.history
        else:
            t.history = history_window(t.ctx.short_term, exclude_text=t.message)
        t.window = t.history

    def _answer_step(self, t: TurnState) -> Iterator[TurnEvent]:
        """The model's answer with tools, or (offline, or failing) the memory-only reply."""
        if t.mode == "llm":
            yield StatusEvent(text="Thinking…")  # a slow model's note follows
            # A turn that stores nothing has no grounding: nothing it says can be remembered.
            grounding = [t.message, *(m.content for m in t.history if m.role == "user")]
            tctx = ToolContext(
                user_id=t.user_id,
                session_id=t.session_id,
                grounding_texts=grounding if t.private is None else None,
            )
            answerer = self.answerer if t.private is None else self.private_answerer
            try:
                t.reply, t.hit_cap = yield from answerer.answer(t, tctx)
            except LLMError as e:
                t.llm_error = e
                t.errors.append(str(e))
                t.mode = "memory-only"
                with self._status_lock:
                    self._status.pop(t.model, None)
                said = "Model not available" if t.private is not None else "Memory-only mode"
                yield StatusEvent(text=f"{said}: {e}", mode=t.mode)
            if t.answer.fit is not None:
                t.block = t.answer.fit.block  # what the model saw last
            if t.answer.first_fit is not None:  # what the conversation showed this turn
                t.window = t.answer.first_fit.window
            t.stored.extend(tctx.stored)
        if t.mode == "memory-only":
            t.reason = t.errors[-1] if t.llm_error else t.status.message
            # "Offline" only when it is: a server that answered (HTTP 500, a garbled stream)
            # failed, and saying it is offline would send the user to start it.
            if not t.status.reachable or isinstance(t.llm_error, LLMUnavailableError):
                t.offline_state = "offline"
            elif t.llm_error is not None:
                t.offline_state = "failed"
            partial = "".join(t.answer.parts)
            t.lead = partial if partial.strip() else ""
            t.reply = t.after_lead(self._offline_notice(t))

    def _offline_notice(self, t: TurnState) -> str:
        """What a turn says without its model. An incognito turn has nothing to show without
        one, nor a re-answer whose model failed; a re-answer offline is the memory-only reply
        of its recall."""
        if t.private is not None and (t.private.kind == "incognito" or t.llm_error is not None):
            what = "An incognito chat" if t.private.kind == "incognito" else "Answering again"
            reason = t.reason.strip()
            reason += "" if reason.endswith((".", "!", "?")) else "."  # quoted in a sentence
            return OFFLINE_REPLY.format(reason=reason, what=what)
        # The notice says "I saved your message": it is stored as it will be shown, and
        # shown only once storing has succeeded (else reworded); None: stores nothing.
        saved = None if t.private is not None else True
        return memory_only_reply(t.reason, t.ctx, t.stored, state=t.offline_state, saved=saved)

    def _store_exchange(self, t: TurnState) -> None:
        """Both messages to short-term memory, the tool sequence learned with its score."""
        # A model failure says nothing about the tools: then nothing is learned.
        failed = t.llm_error is not None
        tools_used = [] if failed else tool_sequence(t.records)
        t.score = None if failed else success_score(t.records, hit_cap=t.hit_cap)
        try:
            memory_only = t.mode == "memory-only"
            written = self.coordinator.store_interaction(
                t.user_id,
                t.session_id,
                t.message,
                # the chat's history holds the reply as the chat shows it (the banner says
                # the model is offline), marked memory-only for the history a model reads
                without_offline_notice(t.reply) if memory_only else t.reply,
                tools_used=tools_used or None,
                execution_time_ms=t.timings["answer"],
                success_score=t.score,
                # When the message already became an explicit memory, the exchange itself
                # would only repeat it in recall.
                store_episode=self.config.store_episodes and t.mode == "llm" and not t.stored,
                turn_id=t.turn_id,
                # the agent's notices (an echo cut, no answer) are the chat's, not the
                # exchange's: recalled later, a model would take them for its own words
                episode_answer=without_notices(t.reply),
                # What the answer was given: the memories that reached the model, or those a
                # reply without the model shows; the details and Stats count by the same rule.
                used=[
                    h.id
                    for h in (
                        in_prompt(t.block.text, [*t.ctx.episodic, *t.ctx.semantic])
                        if t.mode == "llm"
                        else answer_hits(t.ctx, t.stored)
                    )
                ],
                memory_only=memory_only,
            )
            t.stored_ids = list(written.get("short_term") or [])
        except MemorySystemError as e:
            t.saved = False
            t.errors.append(f"could not store the exchange: {e}")
            log.warning("store_interaction failed: %s", e)
        self.learning.remember_turn(t.user_id, t.session_id, t.message, tools_used)

    def _result(self, t: TurnState, extraction: str, summary: str) -> TurnResult:
        speed = self.llm.speed(t.model) if t.mode == "llm" else None
        return TurnResult(
            turn_id=t.turn_id,
            reply=t.reply,
            mode=t.mode,
            recalled=t.ctx,
            memory_block=t.block.text,
            memory_block_tokens=t.block.tokens,
            thinking="".join(t.answer.thinking),
            window=t.answer.report,
            tools=t.records,
            stored=t.stored,
            timings_ms=t.timings,
            model=t.model if t.mode == "llm" else None,
            extraction=extraction,
            success_score=t.score,
            summary=summary,
            error="; ".join(t.errors) or None,
            saved=t.saved,
            private=t.private.kind if t.private is not None else "",
            unknown_about_user=t.knowing is not None and t.knowing.unknown,
            held_back=t.knowing.held_back if t.knowing is not None else [],
            masked=masked_labels(t, self.settings.pii_policy),
            limits=list(t.answer.limits),
            tokens_per_s=speed.tokens_per_s if speed is not None else None,
        )

    # ---- steps -------------------------------------------------------------------------
    def _recall(self, t: TurnState, types: set[str]) -> MemoryContext:
        try:
            options = RecallOptions(
                include_episodic="episodic" in types,
                include_semantic="semantic" in types,
                include_procedural="procedural" in types,
                include_short_term="short_term" in types,
                # the profile is the user's episodic memories too
                include_profile="episodic" in types,
            )
            return self.coordinator.retrieve_all_context(
                t.user_id, t.session_id, t.message, options
            )
        except MemorySystemError as e:
            log.warning("recall failed: %s", e)
            t.errors.append(f"recall failed: {e}")
            return MemoryContext(user_id=t.user_id, session_id=t.session_id, query=t.message)

    def _queue_extraction(self, t: TurnState) -> str:
        policy = self.config.llm_extraction
        if t.private is not None:
            return "skipped (nothing is stored)"
        if policy == "off":
            return "skipped (disabled)"
        if t.mode != "llm":
            self.background.record(
                ExtractionOutcome(
                    turn_id=t.turn_id,
                    user_id=t.user_id,
                    session_id=t.session_id,
                    status="skipped",
                    detail="model offline: trigger phrases and #tags only",
                )
            )
            return "skipped (offline)"
        if policy == "auto" and not talks_about_user(t.message):
            return "skipped (nothing personal)"
        self.background.submit(t.turn_id, t.user_id, t.session_id, t.model, t.message, t.stored)
        return "pending"

    def _queue_summary(self, t: TurnState) -> str:
        """Older messages left the prompt (the recall's window or the history budget): have
        them summarised off the answer path. Memory decides whether enough are new; without
        the model they wait (and a later turn or the maintenance run picks them up)."""
        oldest = None if t.private is not None else dropped_before(t.ctx, t.window, t.stored_ids)
        if self.summaries is None or oldest is None:
            return "not needed"
        summariser = (
            LLMSummariser(self.llm, t.model, grounding=self.grounded) if t.mode == "llm" else None
        )
        self.summaries.submit(t.user_id, t.session_id, summariser, oldest)
        return "queued" if summariser is not None else "waiting for the model"


def _with_entry_labels(stored: StoredMemory, found: list[str]) -> StoredMemory:
    """A memory taken from the message names the secrets masked at the turn's entry whose
    label it holds (its own masking found them already gone)."""
    held = [k for k in found if f"[{k}]" in stored.text]
    if not held:
        return stored
    return stored.model_copy(update={"masked": list(dict.fromkeys([*held, *stored.masked]))})
