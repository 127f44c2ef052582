"""How long a model's reply takes, measured from its own replies, and the reply budget that follows:
about `overhead + prompt tokens x read time + reply tokens x write time` must fit
`AGENT_REPLY_SECONDS`. Kept per server and model in `AGENT_SPEED_FILE` (docs/agent.md,
"Small, thinking and tool-less models")."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

log = logging.getLogger(__name__)

#: A reply shorter than this says little about writing speed (the first token carries set-up).
MIN_SAMPLE_TOKENS = 8
#: A prompt shorter than this says little about reading speed.
MIN_PROMPT_SAMPLE_TOKENS = 32
#: The smallest reply budget a cap leaves.
MIN_REPLY_TOKENS = 64
#: Models kept in the file (the most recently measured).
MAX_FILE_ENTRIES = 100


@dataclass(frozen=True)
class Sample:
    """What one request took. Server durations in seconds; `wall_s` by the client's clock."""

    reply_tokens: int | None = None
    reply_s: float | None = None
    prompt_tokens: int | None = None
    prompt_s: float | None = None
    wall_s: float | None = None

    @classmethod
    def from_server(
        cls,
        prompt_tokens: int | None,
        prompt_ns: int | None,
        reply_tokens: int | None,
        reply_ns: int | None,
        load_ns: int | None,
        wall_s: float,
    ) -> Sample:
        """From a reply's final chunk; the model's loading is left out of the wall time (it
        happens once, not on every reply)."""
        return cls(
            reply_tokens=reply_tokens,
            reply_s=reply_ns / 1e9 if reply_ns else None,
            prompt_tokens=prompt_tokens,
            prompt_s=prompt_ns / 1e9 if prompt_ns else None,
            wall_s=max(0.0, wall_s - (load_ns or 0) / 1e9),
        )

    @property
    def write_s(self) -> float | None:
        n, took = self.reply_tokens, self.reply_s
        return took / n if n and took and n >= MIN_SAMPLE_TOKENS else None

    @property
    def read_s(self) -> float | None:
        n, took = self.prompt_tokens, self.prompt_s
        return took / n if n and took and n >= MIN_PROMPT_SAMPLE_TOKENS else None

    @property
    def overhead_s(self) -> float | None:
        """What the client's clock adds to the server's durations."""
        if self.wall_s is None:
            return None
        return max(0.0, self.wall_s - (self.prompt_s or 0.0) - (self.reply_s or 0.0))


@dataclass(frozen=True)
class Speed:
    """One model's measured speed: seconds per written and per prompt token, and the seconds
    a request costs beyond reading and writing; `prompt_tokens`: its last prompt's size."""

    write_s: float
    read_s: float = 0.0
    overhead_s: float = 0.0
    prompt_tokens: int = 0

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.write_s

    def reply_seconds(self, prompt_tokens: int, reply_tokens: int) -> float:
        """The expected wall time of a reply of `reply_tokens` to a `prompt_tokens` prompt."""
        return self.overhead_s + prompt_tokens * self.read_s + reply_tokens * self.write_s

    def reply_cap(self, prompt_tokens: int, budget: int, seconds: float) -> int:
        """`budget`, or fewer tokens so that the reply takes about `seconds`."""
        left = seconds - self.reply_seconds(prompt_tokens, 0)
        fits = int(left / self.write_s)
        return budget if fits >= budget else max(MIN_REPLY_TOKENS, fits)

    def prompt_room(self, seconds: float) -> int | None:
        """The most prompt tokens it reads in `seconds` with a `MIN_REPLY_TOKENS` reply still
        written in them; None when its reading speed is not measured."""
        if self.read_s <= 0:
            return None
        left = seconds - self.overhead_s - MIN_REPLY_TOKENS * self.write_s
        return max(0, int(left / self.read_s))

    def slow(self, budget: int, seconds: float) -> bool:
        """A full reply to a prompt like the last one would take longer than `seconds`."""
        return self.reply_seconds(self.prompt_tokens, budget) > seconds

    def merged(self, s: Sample) -> Speed:
        """This estimate with one more sample (each new sample weighs half: the machine's load
        changes, and the estimate follows it)."""

        def avg(old: float, new: float | None) -> float:
            return old if new is None else (old + new) / 2

        return Speed(
            avg(self.write_s, s.write_s),
            avg(self.read_s, s.read_s),
            avg(self.overhead_s, s.overhead_s),
            s.prompt_tokens or self.prompt_tokens,
        )

    @classmethod
    def first(cls, s: Sample) -> Speed | None:
        """The estimate from a model's first sample; None when it tells no writing speed."""
        if s.write_s is None:
            return None
        return cls(s.write_s, s.read_s or 0.0, s.overhead_s or 0.0, s.prompt_tokens or 0)


_SPEED = TypeAdapter(Speed)


class SpeedMeter:
    """The speed of each model of one server, learned from its replies and kept in `path`
    (None: in this process only). Thread-safe; a file that cannot be read or written is
    logged and otherwise ignored (the speed only tunes budgets)."""

    def __init__(self, host: str, path: Path | None = None) -> None:
        self._host = host
        self._path = path
        self._speeds: dict[str, Speed | None] = {}
        self._lock = threading.Lock()

    def _key(self, model: str) -> str:
        return f"{self._host} {model}"

    def speed(self, model: str) -> Speed | None:
        with self._lock:
            if model not in self._speeds:
                self._speeds[model] = self._load(model)
            return self._speeds[model]

    def observe(self, model: str, sample: Sample) -> None:
        old = self.speed(model)
        new = Speed.first(sample) if old is None else old.merged(sample)
        if new is None or new == old:
            return
        with self._lock:
            self._speeds[model] = new
            self._save(model, new)

    # ---- the file ----------------------------------------------------------------------
    def _read(self) -> dict[str, dict[str, float]]:
        """Every entry of the file (another process may have added some)."""
        if self._path is None or not self._path.exists():
            return {}
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            log.warning("model speeds in %s not read: %s", self._path, e)
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, dict)}

    def _load(self, model: str) -> Speed | None:
        try:
            speed = _SPEED.validate_python(self._read().get(self._key(model)))
        except ValidationError:  # none kept, or an entry that is not one
            return None
        return speed if speed.write_s > 0 else None

    def _save(self, model: str, speed: Speed) -> None:
        """Read, update and replace the file (atomically: another process may read it)."""
        if self._path is None:
            return
        data = self._read()
        data[self._key(model)] = {**asdict(speed), "measured_at": round(time.time())}
        if len(data) > MAX_FILE_ENTRIES:
            newest = sorted(data, key=lambda k: data[k].get("measured_at", 0), reverse=True)
            data = {k: data[k] for k in newest[:MAX_FILE_ENTRIES]}
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._path.parent, prefix=".speeds-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self._path)
        except OSError as e:
            log.warning("model speeds not written to %s: %s", self._path, e)


def speed_text(tokens_per_s: float) -> str:
    """ "20 tokens/s" (one decimal below 10)."""
    return f"{tokens_per_s:.1f} tokens/s" if tokens_per_s < 10 else f"{tokens_per_s:.0f} tokens/s"
