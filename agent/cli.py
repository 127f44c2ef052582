"""The agent from a terminal: chat, reanswer, status, check, mcp and maintain.

The commands and their options: docs/cli.md; `chat --json`'s fields and the exit codes:
docs/agent.md; incognito turns and `reanswer` (they store nothing): docs/privacy.md.
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib
import sys
from typing import Any

from agent.types import TurnEvent, TurnResult
from memory.errors import EmbedderError, InvalidInputError, MemorySystemError
from memory.terminal import (
    ProgressLines,
    for_terminal,
    invalid_utf8_argument,
    open_coordinator,
    print_result,
)


def _build(args: argparse.Namespace) -> Any:
    from agent.config import AgentSettings
    from agent.loop import ChatAgent
    from memory.config import Settings
    from memory.coordinator import MemoryCoordinator
    from memory.maintenance import Maintenance

    settings = Settings()
    config = AgentSettings()
    if getattr(args, "model", None):
        config = config.model_copy(update={"ollama_model": args.model})
    coordinator = MemoryCoordinator.from_settings(settings)
    # Session summaries of long chats, as in the app.
    agent = ChatAgent(
        settings, coordinator, agent_settings=config, summaries=Maintenance.of(coordinator)
    )
    return agent, coordinator


def _recalled_json(result: TurnResult) -> dict[str, Any]:
    from agent.tools.memory_tools import recalled

    ctx = result.recalled
    return {
        "episodic": [recalled(h).model_dump(mode="json") for h in ctx.episodic],
        "semantic": [recalled(h).model_dump(mode="json") for h in ctx.semantic],
        "procedural": ctx.procedural.model_dump(mode="json") if ctx.procedural else None,
        "short_term": len(ctx.short_term),
        "prompt_block": result.memory_block,
        "prompt_tokens": result.memory_block_tokens,
    }


SUMMARISED = {"recalled", "memory_block", "memory_block_tokens"}  # in "recalled", shorter


def result_json(result: TurnResult) -> dict[str, Any]:
    """The turn as `chat --json` prints it: every field, the recalled memories summarised."""
    return {
        **result.model_dump(mode="json", exclude=SUMMARISED),
        "recalled": _recalled_json(result),
        "held_back": [
            {"id": h.id, "text": h.text, "score": round(h.score, 4), "band": h.band}
            for h in result.held_back
        ],
        "private": result.private or None,
    }


class TerminalOut:
    """A text stream that escapes control characters (a reply may echo a memory's ANSI codes);
    one escape split over two tokens is still caught, since each character is escaped."""

    def __init__(self, out: Any) -> None:
        self._out = out

    def write(self, text: str) -> None:
        self._out.write(for_terminal(text, multiline=True))

    def flush(self) -> None:
        self._out.flush()


def _print_event(ev: TurnEvent, out: Any) -> None:
    if ev.kind == "token":
        out.write(ev.text)
        out.flush()
    elif ev.kind == "thinking":
        pass  # thoughts are not the answer: `--json` has them under "thinking"
    elif ev.kind == "status":
        out.write(f"· {ev.text}\n")
    elif ev.kind == "recall":
        out.write(f"· {ev.text}\n")
        ctx = ev.context
        for h in [*ctx.episodic, *ctx.semantic]:
            out.write(f"    - [{h.memory_type.value}] {for_terminal(h.text)} ({h.band})\n")
        if ctx.procedural is not None:
            out.write(
                f"    - [procedural] {' -> '.join(ctx.procedural.tool_sequence)} "
                f"(confidence {ctx.procedural.confidence:.2f})\n"
            )
    elif ev.kind == "tool_start":
        out.write(f"· tool {ev.text}({json.dumps(ev.arguments, default=str)})\n")
    elif ev.kind == "tool_end":
        rec = ev.record
        state = f"error: {rec.error}" if rec.error else ("empty" if rec.empty else "ok")
        out.write(f"  -> {state} ({rec.ms:.0f} ms)\n")
    elif ev.kind == "stored":
        m = ev.memory
        extra = f", replaces {m.superseded_id}" if m.superseded_id else ""
        out.write(f"· remembered [{m.event_type}] {for_terminal(m.text)} ({m.how}{extra})\n")


def print_turn(events: Any, out: Any) -> TurnResult | None:
    """Print a turn's events as they come (the reply after "assistant> "); its result."""
    result = None
    started = False
    for ev in events:
        if ev.kind == "token" and not started:
            out.write("assistant> ")
            started = True
        if ev.kind == "done":
            result = ev.result
        else:
            _print_event(ev, out)
    return result


def _show(events: Any, args: argparse.Namespace, header: str) -> TurnResult | None:
    """Print a turn's events as they come (with --json, only run it); its result."""
    if args.json:
        return next((ev.result for ev in list(events) if ev.kind == "done"), None)
    out = TerminalOut(sys.stdout)
    out.write(header)
    result = print_turn(events, out)
    out.write("\n")
    return result


def cmd_reanswer(args: argparse.Namespace) -> int:
    from agent.private import reanswer

    agent, coordinator = _build(args)
    try:
        without = [i.strip() for i in args.without.split(",") if i.strip()]
        original = agent.turn_details(args.user, args.session).get(args.turn)
        events = reanswer(agent, args.user, args.session, args.turn, without, model=args.model)
        result = _show(events, args, f"· without {', '.join(without)}\n")
        if result is None:
            return 1
        if args.json:
            doc = {
                "original": original.reply if original else None,
                "without": without,
                **result_json(result),
            }
            print(json.dumps(doc, ensure_ascii=False, indent=2))
            return 0
        print("· nothing was stored")
        if original is not None:
            print(f"· the original answer:\n{for_terminal(original.reply, multiline=True)}")
        return 0
    finally:
        agent.close()
        coordinator.close()


def cmd_chat(args: argparse.Namespace) -> int:
    """One turn, or with --incognito one that stores nothing (agent.private)."""
    from agent.private import incognito_turn

    agent, coordinator = _build(args)
    try:
        turn_args = (args.user, args.session, args.message)
        if args.incognito:
            events = incognito_turn(agent, *turn_args, model=args.model)
        else:
            events = agent.run_turn(*turn_args, model=args.model)
        who = f"{args.user} (incognito)" if args.incognito else args.user
        result = _show(events, args, f"{who}> {args.message}\n")
        if result is None:
            return 1
        out = TerminalOut(sys.stdout)
        if args.incognito and not args.json:
            out.write("· nothing was stored\n")
        elif not args.json:
            out.write(
                f"· mode: {result.mode}; extraction: {result.extraction}; "
                f"{result.timings_ms.get('total', 0):.0f} ms\n"
            )
        if args.wait and result.extraction == "pending":
            agent.wait_for_background(args.wait)
            outcome = agent.background.get(result.turn_id)
            if outcome is not None and result.apply_extraction(outcome) and not args.json:
                out.write(f"· extraction {result.extraction}\n")
                for m in outcome.stored:
                    out.write(f"· remembered [{m.event_type}] {for_terminal(m.text)} (llm)\n")
        if args.json:
            print(json.dumps(result_json(result), ensure_ascii=False, indent=2))
        return 0 if args.incognito else _not_saved(result)
    finally:
        agent.wait_for_background(args.wait or 0.01)
        agent.close()
        coordinator.close()


def _not_saved(result: TurnResult) -> int:
    """The answer was printed, but a script must learn that this exchange is not in memory."""
    if result.saved:
        return 0
    error = for_terminal(result.error or "", multiline=True)
    print(f"error: this exchange was NOT saved: {error}", file=sys.stderr)
    return 1


def _model_client(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """(llm, agent settings, model) for the commands that talk to the model without a store."""
    from agent.config import AgentSettings
    from agent.llm import OllamaLLM
    from memory.config import Settings

    settings = Settings()
    config = AgentSettings()
    model = args.model or config.ollama_model
    llm = OllamaLLM.from_settings(settings, config)
    return llm, config, model


def cmd_check(args: argparse.Namespace) -> int:
    """`status`: is the model there, and what can it do? `check`: that, then the probes."""
    from agent.check import ModelCheck
    from agent.tools.memory_tools import MemoryToolkit
    from agent.tools.registry import ToolRegistry
    from agent.tools.wellness import WellnessToolkit

    llm, config, model = _model_client(args)
    st = llm.status(model)
    profile = llm.profile(model) if st.ok else None
    window = llm.window(model) if st.ok else None
    if args.status and args.json:
        out = st.model_dump(mode="json")
        out["profile"] = profile.model_dump(mode="json") if profile else None
        out["num_ctx"] = window
        print(json.dumps(out, indent=2))
    elif not args.json:
        print(f"Ollama at {st.host}: {'reachable' if st.reachable else 'NOT reachable'}")
        print(f"Model {st.model}: {'available' if st.model_available else 'NOT available'}")
        if profile is not None:
            print(f"Profile: {for_terminal(profile.describe())}")
        if window is not None:
            print(f"Window the agent sends and plans for (num_ctx): {window:,} tokens")
        if st.models:
            print("Pulled models: " + ", ".join(st.models))
        if st.message:
            print(st.message)
    if not st.ok and not args.status:
        print(f"error: cannot check {model}: {st.message}", file=sys.stderr)
    if args.status or not st.ok:
        return 0 if st.ok else 1
    # The agent's real tool schemas; the probes never call a tool, so no store is needed.
    registry = ToolRegistry([MemoryToolkit(None, None), WellnessToolkit()])  # type: ignore[arg-type]
    if not args.json:
        print(f"Checking {model} (a few short requests)…", file=sys.stderr)
    report = ModelCheck(llm, registry, config).run(model)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return 0
    for p in report.probes:
        mark = "PASS" if p.passed else "FAIL"
        print(f"  {mark}  {p.name:<22} {p.ms:>8.0f} ms  {for_terminal(p.detail)}")
    if report.recommendations:
        print("What the agent does about it:")
        for r in report.recommendations:
            print(f"  - {r}")
    return 0


def cmd_maintain(args: argparse.Namespace) -> int:
    """`python -m memory maintain` with the model: it judges which memories close in meaning
    are one fact, writes merged texts and due session summaries. Ollama unreachable or the
    model not pulled: said on stderr, and the model-free run happens (exit 0, "model": null in
    --json), as the app's background run does. 1 when another run holds the lock."""
    from agent.merging import LLMJudge, LLMMerger
    from agent.summarising import LLMSummariser
    from memory.config import Settings
    from memory.maintenance import Maintenance, MaintenanceBusyError
    from memory.writing import check_grounded

    llm, _, model = _model_client(args)
    st = llm.status(model)
    if not st.ok:
        why = for_terminal(st.message or f"{model} is not available", multiline=True)
        print(f"warning: {why}\nRunning without the model (lexical rule).", file=sys.stderr)
    try:
        with open_coordinator(Settings()) as coordinator:
            maint = (
                Maintenance.of(
                    coordinator,
                    merger=LLMMerger(llm, model),
                    # a summary the chat does not support is not kept, as at a chat's end
                    summariser=LLMSummariser(
                        llm,
                        model,
                        grounding=lambda claim, turns: check_grounded(
                            claim, turns, similarity=coordinator.text_similarity
                        ),
                    ),
                    judge=LLMJudge(llm, model),
                )
                if st.ok
                else Maintenance.of(coordinator)
            )
            report = maint.run(
                user_id=args.user, dry_run=args.dry_run, progress=ProgressLines("maintain")
            )
    except MaintenanceBusyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print_result(args, {**report.as_json(), "model": model if st.ok else None}, report.as_text())
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from agent.errors import ServerConfigError
    from agent.mcp_server import run

    try:
        return run(
            user=args.user,
            http=args.http,
            host=args.host,
            port=args.port,
            tokens_file=args.tokens_file,
        )
    except ServerConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    bad = invalid_utf8_argument(argv)
    if bad:
        print(f"error: {bad}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="python -m agent", description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging to stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    # Options several commands share, spelled once.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--model", default=None, help="Ollama model (default: OLLAMA_MODEL)")
    common.add_argument("--json", action="store_true", help="print the result as JSON")
    a_turn = argparse.ArgumentParser(add_help=False, parents=[common])
    a_turn.add_argument("--user", required=True)
    a_turn.add_argument("--session", required=True)

    chat = sub.add_parser("chat", help="one chat turn", parents=[a_turn])
    chat.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait for background memory extraction and report it",
    )
    chat.add_argument(
        "--incognito",
        action="store_true",
        help="recall no long-term memory and store nothing of this turn",
    )
    chat.add_argument("message")
    chat.set_defaults(func=cmd_chat)

    again = sub.add_parser(
        "reanswer",
        help="answer a stored turn again without some of its memories (stores nothing)",
        parents=[a_turn],
    )
    again.add_argument("--turn", required=True, help="the answer's turn id (chat --json: turn_id)")
    again.add_argument("--without", required=True, help="memory ids to leave out, comma-separated")
    again.set_defaults(func=cmd_reanswer)

    status = sub.add_parser(
        "status", help="is Ollama reachable and the model pulled?", parents=[common]
    )
    status.set_defaults(func=cmd_check, status=True)

    check = sub.add_parser(
        "check",
        help="probe the model: JSON extraction, tool calls, memory use, context, thinking",
        description="Short probes against the chosen model, with what the agent will do about "
        "each finding. Exit 0 when the check ran, whatever it found; 1 when the model cannot "
        "be reached.",
        parents=[common],
    )
    check.set_defaults(func=cmd_check, status=False)

    mcp = sub.add_parser(
        "mcp",
        help="serve the memory to other agents over MCP (stdio, or HTTP with --http)",
        description="MCP server of the memory. stdio: one user (--user). HTTP: streamable HTTP "
        "at /mcp, each request with `Authorization: Bearer <token>` from --tokens-file.",
    )
    mcp.add_argument("--user", default=None, help="stdio: the user whose memory is served")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP bind address (127.0.0.1)")
    mcp.add_argument("--port", type=int, default=None, help="HTTP port (8765)")
    mcp.add_argument(
        "--tokens-file",
        type=pathlib.Path,
        default=None,
        metavar="F",
        help='HTTP: JSON object {"<token>": "<user id>"}',
    )
    mcp.set_defaults(func=cmd_mcp)

    maintain = sub.add_parser(
        "maintain",
        help="memory maintenance with the model (python -m memory maintain, judged merges)",
        parents=[common],
    )
    maintain.add_argument("--user", default=None, help="only this user (default: every user)")
    maintain.add_argument("--dry-run", action="store_true", help="list proposals, change nothing")
    maintain.set_defaults(func=cmd_maintain)

    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not args.verbose:
        logging.getLogger("httpx").setLevel(logging.WARNING)
    try:
        return int(args.func(args))
    except InvalidInputError as e:
        print(f"error: {for_terminal(str(e), multiline=True)}", file=sys.stderr)
        return 2
    except MemorySystemError as e:
        what = "embedding model" if isinstance(e, EmbedderError) else "memory store"
        print(
            f"error: the {what} is unavailable: {for_terminal(str(e), multiline=True)}",
            file=sys.stderr,
        )
        return 3
