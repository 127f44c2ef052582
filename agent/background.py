"""Background memory extraction, off the answer path, with a log of outcomes for the UI.

One worker runs jobs in submission order (a later "new goal" is written after an earlier one);
for a slow model a job waits until no reply streams (`ReplyGate`): they would share the server."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from agent.errors import ExtractionError, LLMError, LLMLimitError
from agent.extraction import LLMExtractor
from agent.types import ExtractionOutcome, StoredMemory
from memory.errors import MemorySystemError
from memory.writing import Grounding, WritePolicy

log = logging.getLogger(__name__)

#: What the turn's status box says when the extraction was cut (`ExtractionOutcome.limit`).
EXTRACTION_CUT = (
    "The background memory extraction was cut ({why}), so the model learned nothing from "
    "this message. Say 'remember: ...' to store a fact, use a chat model that follows JSON "
    "schemas (for example qwen2.5:7b), or set AGENT_LLM_EXTRACTION=off."
)


#: The longest a slow model's job waits for replies to end before it runs anyway.
DEFER_LIMIT_S = 300.0


class ReplyGate:
    """Counts the replies streaming now; background work for a slow model waits for none."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0

    @contextmanager
    def replying(self) -> Iterator[None]:
        with self._cond:
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """True once no reply streams; False when `timeout` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._active == 0, timeout)


class SerialWorker:
    """One thread running jobs in submission order; `wait` for those queued."""

    def __init__(self, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._futures: set[Future[Any]] = set()
        self._futures_lock = threading.Lock()

    def _queue(self, job: Callable[..., Any], *args: Any) -> None:
        with self._futures_lock:
            fut = self._pool.submit(job, *args)
            self._futures.add(fut)
        fut.add_done_callback(self._forget)

    def _forget(self, fut: Future[Any]) -> None:
        with self._futures_lock:
            self._futures.discard(fut)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for every queued job; True when none is left."""
        with self._futures_lock:
            pending = set(self._futures)
        _, not_done = wait(pending, timeout=timeout)
        return not not_done

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)


class BackgroundExtractor(SerialWorker):
    def __init__(
        self,
        extractor: LLMExtractor,
        writer: WritePolicy,
        *,
        log_size: int,
        on_outcome: Callable[[str], None],
        grounding: Callable[[str, list[str]], Grounding],
        on_finished: Callable[[ExtractionOutcome], None],
        gate: ReplyGate,
        slow: Callable[[str], bool],
    ) -> None:
        """`on_outcome(status)`: each finished outcome and each memory dropped as "ungrounded",
        for metrics; `grounding(claim, sources)`: does the message support a memory;
        `on_finished(outcome)`: each job's final outcome; `gate` and `slow(model)`: a slow
        model's job waits until no reply streams."""
        self._gate = gate
        self._slow = slow
        self._on_outcome = on_outcome
        self._on_finished = on_finished
        self._grounding = grounding
        self._extractor = extractor
        self._writer = writer
        self._log: deque[ExtractionOutcome] = deque(maxlen=log_size)
        self._lock = threading.Lock()
        super().__init__("memory-extraction")

    def submit(
        self,
        turn_id: str,
        user_id: str,
        session_id: str,
        model: str,
        message: str,
        already_stored: Sequence[StoredMemory] = (),
    ) -> None:
        outcome = ExtractionOutcome(
            turn_id=turn_id,
            user_id=user_id,
            session_id=session_id,
            status="pending",
            detail="LLM extraction queued",
        )
        with self._lock:
            self._log.append(outcome)
        self._queue(self._run, outcome, model, message, list(already_stored))

    def record(self, outcome: ExtractionOutcome) -> None:
        """Log an outcome decided without a job (e.g. skipped while offline)."""
        with self._lock:
            self._log.append(outcome)
        self._count(outcome.status)

    def _count(self, status: str) -> None:
        try:
            self._on_outcome(status)
        except Exception:  # metrics never break extraction
            log.warning("could not count an extraction outcome", exc_info=True)

    def _run(
        self,
        outcome: ExtractionOutcome,
        model: str,
        message: str,
        already_stored: list[StoredMemory],
    ) -> None:
        status, detail, limit = "failed", "", ""
        stored, dups = [], 0
        ungrounded: list[str] = []
        if self._slow(model):
            self._gate.wait_idle(DEFER_LIMIT_S)
        try:
            candidates, _ = self._extractor.extract(
                model, message, [m.text for m in already_stored]
            )
            same_turn = frozenset(m.id for m in already_stored)
            for cand in candidates:
                # A weak model invents facts ("User owns a yacht" from "hello there"): only
                # what the message supports is kept; the rest is counted and listed.
                verdict = self._grounding(cand.text, [message])
                if not verdict.supported:
                    ungrounded.append(f"{cand.text} ({verdict.reason})")
                    self._count("ungrounded")
                    continue
                res = self._writer.write(
                    outcome.user_id,
                    outcome.session_id,
                    cand,
                    context="LLM extraction",
                    same_turn_ids=same_turn,
                )
                if res.stored is not None:
                    stored.append(res.stored)
                else:
                    dups += 1
            status = "done"
            detail = (
                f"{len(stored)} stored, {dups} already known"
                + (f", {len(ungrounded)} dropped as not said by the user" if ungrounded else "")
                if candidates
                else "nothing to remember"
            )
        except ExtractionError as e:
            detail = str(e)
        except LLMLimitError as e:
            detail = f"cut: {e}"
            why = "its time limit" if e.what == "time" else "its token cap"
            limit = EXTRACTION_CUT.format(why=why)
        except LLMError as e:
            detail = f"model error: {e}"
        except MemorySystemError as e:
            detail = f"memory store error: {e}"
        except Exception as e:  # keep the worker alive; the failure is logged and visible
            log.exception("memory extraction crashed")
            detail = f"unexpected error: {type(e).__name__}: {e}"
        if status == "failed":
            log.warning("memory extraction for turn %s failed: %s", outcome.turn_id, detail)
        with self._lock:
            outcome.status = status  # type: ignore[assignment]
            outcome.detail = detail
            outcome.limit = limit
            outcome.stored = stored
            outcome.duplicates = dups
            outcome.ungrounded = ungrounded
            final = outcome.model_copy(deep=True)
        self._count(status)
        try:
            self._on_finished(final)
        except Exception:  # keeping it is a nicety: the worker carries on
            log.warning("could not keep an extraction outcome", exc_info=True)

    def outcomes(self, user_id: str | None = None) -> list[ExtractionOutcome]:
        """Most recent first (at most AGENT_EXTRACTION_LOG_SIZE)."""
        with self._lock:
            return [
                o.model_copy(deep=True)
                for o in reversed(self._log)
                if user_id is None or o.user_id == user_id
            ]

    def get(self, turn_id: str) -> ExtractionOutcome | None:
        with self._lock:
            for o in reversed(self._log):
                if o.turn_id == turn_id:
                    return o.model_copy(deep=True)
        return None
