"""`make real-model`: each small model behind llama-server and the Ollama adapter, with an
embedded Redis; `python -m agent check` and a scripted chat through the real agent; one result
record per model in benchmarks/results/.

    python -m realmodel [--models gemma3:270m,smollm2:135m] [--ctx 4096] [--no-record]

The server's window is fixed at its start (`--ctx`, REAL_MODEL_CTX; 4,096 as Ollama picks on a
CPU): a request's num_ctx cannot change it, and the adapter reports it as the model's context.
The check and the chat share a speed file of their own (AGENT_SPEED_FILE), as the CLI and the
app share the project's: the chat's first reply is fitted to the speed the check measured.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from realmodel.build import CACHE, build, cmake_options, cpu_flags
from realmodel.models import Model, install
from tests.fakes.llama_adapter import Exchange, LlamaAdapter

USER = "real-model-user"
#: (session, message, what it tries, words a stored memory should hold, words recall should hold)
SCRIPT: tuple[tuple[str, str, str, list[str], list[str]], ...] = (
    ("first", "Remember that I'm allergic to peanuts.", "remember a fact", ["peanut"], []),
    ("second", "What am I allergic to?", "recall it in a new session", [], ["peanut"]),
    ("second", "Do I have any food allergies?", "a question about a fact", [], ["peanut"]),
    ("second", "Actually, I'm not allergic to peanuts, I'm allergic to shellfish.",
     "a correction", ["shellfish"], []),
    ("second", "Can you remember that I'm vegan?", "a request phrased as a question",
     ["vegan"], []),
)  # fmt: skip
BACKGROUND_WAIT_S = 300  # bounded wait for a turn's background extraction


class Tee(io.TextIOBase):
    """Prints what the harness shows and keeps it for the record's transcript."""

    def __init__(self) -> None:
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        sys.stdout.write(text)
        sys.stdout.flush()
        return self.kept.write(text)


@contextmanager
def llama_server(binary: Path, model: Model, ctx: int, log: Path) -> Iterator[str]:
    """llama-server for `model` on 127.0.0.1 (one thread: the machine is shared); its URL.
    Stopped by its PID."""
    from benchmarks.common import free_port

    port = free_port()
    cmd = [str(binary), "-m", str(model.gguf), "--host", "127.0.0.1", "--port", str(port),
           "-c", str(ctx), "-t", "1", "-np", "1", "--jinja", "--no-webui"]  # fmt: skip
    if model.template is not None:
        cmd += ["--chat-template-file", str(model.template)]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama-server ended ({proc.returncode}); its log: {log}")
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama-server not ready after 180 s; its log: {log}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@contextmanager
def embedded_redis() -> Iterator[str]:
    from benchmarks.common import free_port
    from memory.config import PROJECT_ROOT
    from memory.runtime.server import EmbeddedRedis

    with tempfile.TemporaryDirectory(prefix="real-model-redis-") as tmp:
        server = EmbeddedRedis(Path(tmp), free_port(), PROJECT_ROOT)
        server.start()
        try:
            yield server.url
        finally:
            server.stop()


def run_check(
    adapter: LlamaAdapter, model: Model, out: Tee, speeds: Path
) -> tuple[str, list[dict[str, Any]]]:
    """`python -m agent check` against the adapter: its output verbatim and each probe's
    verdict (read from its PASS/FAIL lines)."""
    env = os.environ | {
        "OLLAMA_HOST": adapter.url,
        "OLLAMA_MODEL": model.name,
        "AGENT_SPEED_FILE": str(speeds),
    }
    cmd = [sys.executable, "-m", "agent", "check", "--model", model.name]
    out.write(f"$ OLLAMA_HOST={adapter.url} python -m agent check --model {model.name}\n")
    started = time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, check=False)
    text = done.stderr + done.stdout
    out.write(text + f"(exit {done.returncode}, {time.monotonic() - started:.0f} s)\n")
    probes = []
    for line in done.stdout.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] in ("PASS", "FAIL"):
            probes.append({"name": words[1], "passed": words[0] == "PASS", "line": line.strip()})
    return text, probes


def _requests(log: list[Exchange]) -> list[dict[str, Any]]:
    def r(v: float | None) -> float | None:
        return round(v, 1) if v is not None else None

    return [
        {
            "kind": "json" if x.structured else "chat",
            "prompt_tokens": x.prompt_tokens,
            "generated_tokens": x.eval_tokens,
            "generated_per_s": r(x.eval_per_s),
            "prompt_per_s": r(x.prompt_per_s),
            "cap": x.max_tokens,
            "finish": x.finish_reason,
            "seconds": r(x.seconds),
            "dropped_messages": x.dropped_messages,
            "error": x.error,
            "client_closed": x.client_closed,
        }
        for x in log
    ]


def run_chat(
    adapter: LlamaAdapter,
    model: Model,
    redis_url: str,
    out: Tee,
    namespace: str = "realmodel",
    speeds: Path | None = None,
) -> tuple[list[dict], str]:
    """The scripted chat through the real agent (its turns as `python -m agent chat` prints
    them), each turn's background extraction waited for; the turns and the embedder's id."""
    from agent.cli import TerminalOut, print_turn
    from agent.config import AgentSettings
    from agent.loop import ChatAgent
    from memory.config import Settings
    from memory.coordinator import MemoryCoordinator
    from memory.maintenance import Maintenance

    settings = Settings(
        _env_file=None,
        redis_url=redis_url,
        memory_namespace=namespace,
        ollama_host=adapter.url,
    )
    config = AgentSettings(_env_file=None, ollama_model=model.name, speed_file=speeds)
    coordinator = MemoryCoordinator.from_settings(settings)
    agent = ChatAgent(
        settings, coordinator, agent_settings=config, summaries=Maintenance.of(coordinator)
    )
    turns = []
    term = TerminalOut(out)
    try:
        for session, message, tries, store_words, recall_words in SCRIPT:
            first = len(adapter.requests)
            term.write(f"\n[{tries}; session {session}]\n{USER}> {message}\n")
            started = time.monotonic()
            result = print_turn(agent.run_turn(USER, session, message), term)
            reply_s = time.monotonic() - started
            term.write("\n")
            if result is None:
                raise RuntimeError(f"the turn {message!r} ended without a result")
            stored = [m.text for m in result.stored]
            extraction = result.extraction
            if extraction == "pending":
                agent.wait_for_background(BACKGROUND_WAIT_S)
                outcome = agent.background.get(result.turn_id)
                if outcome is not None:
                    extraction = outcome.status + (f": {outcome.detail}" if outcome.detail else "")
                    stored += [m.text for m in outcome.stored]
                    for m in outcome.stored:
                        term.write(f"· remembered [{m.event_type}] {m.text} (llm)\n")
            total_s = time.monotonic() - started
            recalled = [h.text for h in [*result.recalled.episodic, *result.recalled.semantic]]
            block_lines = [ln for ln in result.memory_block.splitlines() if len(ln.strip()) > 20]
            expected = [
                *(
                    {"what": f"a stored memory holds {w!r}",
                     "met": any(w in s.lower() for s in stored)}
                    for w in store_words
                ),
                *(
                    # the prompt's memory block: a health line rides in the profile, not
                    # among the recalled hits
                    {"what": f"recall brought {w!r} into the prompt",
                     "met": w in result.memory_block.lower()}
                    for w in recall_words
                ),
                {"what": "the reply does not repeat the prompt's memory lines",
                 "met": not any(ln.strip() in result.reply for ln in block_lines)},
            ]  # fmt: skip
            term.write(
                f"· reply {reply_s:.1f} s ({result.window.done_reason or '?'}), with the "
                f"background extraction {total_s:.1f} s; extraction: {extraction}\n"
            )
            for limit in result.limits:
                term.write(f"· cut: {limit}\n")
            for e in expected:
                term.write(f"· {'yes' if e['met'] else 'NO '}  {e['what']}\n")
            turns.append(
                {
                    "tries": tries,
                    "session": session,
                    "message": message,
                    "reply": result.reply,
                    "reply_s": round(reply_s, 1),
                    "total_s": round(total_s, 1),
                    "done_reason": result.window.done_reason,
                    # what a cap or a slow reader's shorter prompt cut (the status box's lines)
                    "limits": list(result.limits),
                    "read_cap": result.window.split.read_cap if result.window.split else None,
                    # the agent's estimate of its last prompt (the server's count is per request)
                    "planned_prompt": result.window.split.prompt if result.window.split else None,
                    "stored": stored,
                    "recalled": recalled,
                    "extraction": extraction,
                    "error": result.error,
                    "expected": expected,
                    "requests": _requests(adapter.requests[first:]),
                }
            )
    finally:
        agent.wait_for_background(1)
        agent.close()
        coordinator.close()
    return turns, coordinator.embedder.model_id


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def figures(probes: list[dict], turns: list[dict], log: list[Exchange]) -> dict[str, Any]:
    expected = [e for t in turns for e in t["expected"]]
    out = {
        "checks_passed": sum(p["passed"] for p in probes),
        "checks_total": len(probes),
        "chat_expectations_met": sum(e["met"] for e in expected),
        "chat_expectations_total": len(expected),
        "generated_per_s": _median([x.eval_per_s for x in log if x.eval_per_s]),
        "prompt_per_s": _median([x.prompt_per_s for x in log if x.prompt_per_s]),
        "reply_s": _median([t["reply_s"] for t in turns]),
        "reply_s_max": max((t["reply_s"] for t in turns), default=None),
        "turn_with_extraction_s": _median([t["total_s"] for t in turns]),
        "requests_at_length": sum(x.finish_reason == "length" for x in log),
        "requests_failed": sum(x.error is not None for x in log),
    }
    return {k: v for k, v in out.items() if v is not None}


def run_model(binary: Path, model: Model, ctx: int, record: bool) -> dict[str, Any]:
    from benchmarks.common import git_commit
    from benchmarks.results import make_record, write_record

    out = Tee()
    out.write(f"\n=== {model.name}: {model.about} ({model.gguf.name}) ===\n")
    logs = CACHE / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    load_before = os.getloadavg()
    date = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    server_log = logs / f"llama-server-{model.name.replace(':', '-')}.log"
    with llama_server(binary, model, ctx, server_log) as url, LlamaAdapter(url, model.name) as ad:
        facts = ad.facts()
        out.write(f"llama-server {facts.build}, window {facts.window} tokens, tools in its "
                  f"template: {'yes' if facts.tools else 'no'}; log {server_log}\n")  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="real-model-speeds-") as tmp:
            speeds = Path(tmp) / "model-speeds.json"
            check_text, probes = run_check(ad, model, out, speeds)
            with embedded_redis() as redis_url:
                turns, embedder = run_chat(ad, model, redis_url, out, speeds=speeds)
        log = list(ad.requests)
    seconds = time.monotonic() - started
    figs = figures(probes, turns, log) | {"seconds": round(seconds)}
    out.write(f"=== {model.name}: {seconds:.0f} s; {figs} ===\n")
    if not record:
        return figs
    rec = make_record(
        "real-model",
        figs,
        command="make real-model",
        commit=git_commit(),
        embedder=embedder,
        data=model.gguf,
        date=date,
        note=f"{model.name}: {model.about}; llama-server window {ctx}, -t 1",
    )
    flags = cpu_flags()
    rec |= {
        "model": model.name,
        "server": {"build": facts.build, "window": facts.window, "cmake": cmake_options(flags)},
        "cpu_flags": sorted(f for f in flags if f.startswith(("avx", "amx", "fma", "f16c"))),
        "load_average": {"start": [round(v, 1) for v in load_before],
                         "end": [round(v, 1) for v in os.getloadavg()]},
        "checks": probes,
        "check_output": check_text,
        "turns": turns,
    }  # fmt: skip
    path = write_record(rec)
    print(f"recorded {path}", file=sys.stderr)
    return figs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m realmodel", description=__doc__.split("\n")[0])
    p.add_argument("--models", default="smollm2:135m,gemma3:270m", help="run in this order")
    p.add_argument("--ctx", type=int, default=int(os.environ.get("REAL_MODEL_CTX", 4096)))
    p.add_argument("--no-record", action="store_true", help="write no result record")
    args = p.parse_args(argv)
    started = time.monotonic()
    print(f"llama-server: building or reusing {CACHE / 'llama-server'} (first build: 20+ min)")
    binary = build()
    available = {m.name: m for m in install()}
    for name in args.models.split(","):
        if name not in available:
            raise SystemExit(f"unknown model {name!r}; these are: {', '.join(available)}")
        run_model(binary, available[name], args.ctx, not args.no_record)
    print(f"\nreal-model done in {time.monotonic() - started:.0f} s")
    return 0
