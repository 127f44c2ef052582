"""`python -m memory`: the memory system from the command line (`--json` for scripts); each
command's options: docs/cli.md, or `--help`. Exit codes: 0 ok, 1 memory error, 2 usage error."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.config import PROJECT_ROOT, Settings
from memory.errors import InvalidInputError, MemorySystemError, NotFoundError
from memory.models import SHOWN_FLOOR, MemoryType, check_id, check_metadata, shown_hits
from memory.queries import ListQuery, RecallOptions
from memory.terminal import (
    ProgressLines,
    for_terminal,
    invalid_utf8_argument,
    open_coordinator,
    print_result,
)
from memory.writing import WritePolicy, candidate_for, write_fact

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator

#: What a command answers: (the `--json` payload, the text), printed by `main` (exit 0), or an
#: exit code when it printed its answer itself.
Answer = tuple[Any, str] | int


# --- commands -------------------------------------------------------------------------
def cmd_redis(args: argparse.Namespace, settings: Settings) -> Answer:
    from memory.runtime.server import EmbeddedRedis

    if args.action == "confirm":
        from memory.keys import Keys
        from memory.runtime import connect

        client = connect(settings)
        try:
            done = bool(client.delete(Keys(settings.memory_namespace).store_unconfirmed))
        finally:
            client.close()
        return {"confirmed": done}, (
            "confirmed: memories are stored on this Redis again"
            if done
            else "nothing to confirm: writes were not held back"
        )

    if settings.redis_url and args.action != "status":
        print(
            f"REDIS_URL is set ({settings.redis_url}); the embedded server is not used.",
            file=sys.stderr,
        )
    server = EmbeddedRedis(settings.redis_data_dir, settings.redis_port, PROJECT_ROOT)
    if args.action == "start":
        url = server.start()
        return {"url": url, **server.status()}, url
    if args.action == "stop":
        stopped = server.stop()
        return {"stopped": stopped}, "stopped" if stopped else "not running"
    st = server.status()
    return st, "\n".join(f"{k}: {v}" for k, v in st.items())


def cmd_add(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    mtype, settings = MemoryType.parse(args.type), coord.settings
    if mtype is MemoryType.SEMANTIC:
        fact, dup = write_fact(
            coord,
            args.text,
            category=args.category or "general",
            fact_type=args.kind or "general",
            added_by=args.user or "",
            context=args.context or "",
            source="cli",
            pii_policy=settings.pii_policy,
        )
        if fact is None:
            return {"id": None, "type": "semantic", "duplicate_of": dup}, f"already known: {dup}"
        return {"id": fact.id, "type": "semantic"}, fact.id
    if mtype is not MemoryType.EPISODIC:
        raise SystemExit(
            "Only episodic memories and semantic facts are added by hand: messages come "
            "from the chat, procedures are learned from tool use."
        )
    if not args.user:
        raise SystemExit("--user is required for episodic memories")
    # measured for depth before it is parsed (json.loads recurses)
    meta = check_metadata(args.metadata) if args.metadata else None
    policy = WritePolicy(
        coord, dedup_threshold=settings.dedup_threshold, pii_policy=settings.pii_policy
    )
    cand = candidate_for(args.text, args.kind, args.tag, how="user", importance=args.importance)
    res = policy.write(
        args.user,
        check_id(args.session, "session id") if args.session else "cli",
        cand,
        context=args.context or "",
        metadata=meta,
    )
    if res.stored is None:
        return (
            {"id": None, "type": "episodic", "duplicate_of": res.duplicate_of,
             "reason": res.reason},
            f"already remembered ({res.reason}): {res.duplicate_of}"
            if res.duplicate_of
            else f"not stored: {res.reason}",
        )  # fmt: skip
    out: dict[str, Any] = {"id": res.stored.id, "type": "episodic", "kind": res.stored.event_type}
    if res.stored.superseded_id:
        out["replaced"] = res.stored.superseded_id
    line = res.stored.id
    if res.stored.masked:  # stored with these replaced by labels
        out["masked"] = res.stored.masked
        line += f" (masked: {', '.join(res.stored.masked)})"
    return out, line


def cmd_recall(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    ctx = coord.retrieve_all_context(
        args.user, args.session, args.query, RecallOptions(k_episodic=args.k, k_semantic=args.k)
    )
    hit: Any = {"__all__": {"memory_type"}}  # a hit's type is the list it is in
    payload = ctx.model_dump(
        include={"episodic", "semantic", "procedural", "short_term", "hits", "timings_ms"},
        exclude={"episodic": hit, "semantic": hit},
    )
    lines = [
        f"{h.score:.3f} {h.band:8} {kind:10} {h.id} {for_terminal(h.text)}"
        for kind, found in (("episodic", ctx.episodic), ("semantic", ctx.semantic))
        for h in found
    ] or ["(nothing recalled)"]
    if ctx.procedural:
        p = ctx.procedural
        lines.append(f"procedural: {' -> '.join(p.tool_sequence)} (confidence {p.confidence:.2f})")
    lines.append(f"\nhits: {ctx.hits}  total {ctx.timings_ms.get('total')} ms")
    return payload, "\n".join(lines)


def cmd_search(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    hits, weaker = shown_hits(coord.search(args.user, args.query, args.type, k=args.k))
    lines = [f"{h.score:.3f} {h.band:8} {h.id} {for_terminal(h.text)}" for h in hits]
    if weaker:
        some = "no more" if hits else "no"  # a question about nothing stored says so
        lines.append(f"{some} relevant memories ({weaker} below {SHOWN_FLOOR} not shown)")
    return [h.model_dump(mode="json") for h in hits], "\n".join(lines) or "no hits"


def cmd_list(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    rows, total = coord.list_memories(
        args.user, args.type, ListQuery(page=args.page, page_size=args.page_size)
    )
    lines = [
        f"{r['id']}  {'(paused) ' * bool(r.get('paused'))}{for_terminal(str(r['text']))}"
        for r in rows
    ]
    return {"total": total, "items": rows}, "\n".join([*lines, f"({total} in all)"])


def cmd_delete(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    for t in [args.type] if args.type else [t.value for t in MemoryType]:
        try:
            # the CLI is the operator's: shared facts may change too
            coord.delete_memory(args.user, t, args.id, as_admin=True)
            return {"deleted": args.id, "type": t}, f"deleted {t} {args.id}"
        except NotFoundError:
            continue
    raise NotFoundError(f"No memory {args.id!r} for user {args.user!r}.")


def cmd_pause(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    """Pause an episodic memory (kept and listed, never recalled) or, as `resume`, resume it."""
    paused = args.command == "pause"
    coord.update_memory(args.user, MemoryType.EPISODIC, args.id, paused=paused)
    done = "paused" if paused else "resumed"
    return {"id": args.id, "paused": paused}, f"{done} episodic {for_terminal(args.id)}"


def cmd_forget(args: argparse.Namespace, settings: Settings) -> Answer:
    """Preview what mentions a topic, confirm, then delete it and what came from it."""
    from datetime import datetime

    from memory.admin.forget import TopicForget, topic_roots
    from memory.words import forgotten_words

    check_id(args.user)
    topic_roots(args.query)  # bad input: exit 2 before the model loads
    if not args.yes and not sys.stdin.isatty():
        print(
            "error: forgetting deletes for real and needs a confirmation: run it in a "
            "terminal, or add --yes",
            file=sys.stderr,
        )
        return 2
    with open_coordinator(settings) as coord:
        forget = TopicForget.of(coord)
        if not args.yes:
            preview = forget.preview(args.user, args.query)
            out = sys.stderr if args.json else sys.stdout
            for m in preview.matches:
                day = datetime.fromtimestamp(m.timestamp / 1000).strftime("%Y-%m-%d")
                score = f"{m.score:.2f}" if m.score is not None else "word"
                print(f"{day}  {m.kind:28.28} {score:>5}  {for_terminal(m.text)}", file=out)
            if preview.shared_facts:
                print(f"({preview.shared_facts} shared facts mention it: they stay)", file=out)
            n = len(preview.matches)
            question = (
                f"Forget {forgotten_words(n, 'items')} and what came from them"
                if n
                else "Nothing mentions it; remove its traces (details, cached queries)"
            )
            print(f"{question}? [y/N] ", end="", file=out, flush=True)
            try:
                answer = input()
            except EOFError:
                answer = ""
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing was forgotten", file=sys.stderr)
                return 1
        report = forget.forget(args.user, args.query)
    return (
        {"user": report.user_id, "query": report.query, "items": report.items,
         "counts": report.counts, "total": report.total},
        f"forgot {report.summary()}" if report.total else "nothing to forget",
    )  # fmt: skip


def cmd_export(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    data = coord.export_user(args.user)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if args.output == "-":
        print(text)
    else:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as e:
            raise InvalidInputError(f"Cannot write {args.output}: {e.strerror}.") from None
        counts = {k: len(data[k]) for k in ("episodic", "semantic", "procedural")}
        print(f"exported {counts} to {args.output}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace, settings: Settings) -> Answer:
    from memory.admin.transfer import read_import_file

    raw = read_import_file(Path(args.file))  # sized before it is read, before the store opens
    with open_coordinator(settings) as coord:
        counts = coord.import_user(
            raw,
            mode="replace" if args.replace else "merge",
            user_id=args.user,
            progress=ProgressLines("import"),  # counts on stderr: stdout stays the answer
        )
    return {"imported": counts}, f"imported {counts}"


def cmd_sweep_secrets(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    counts = coord.sweep_secrets(args.user, apply=not args.dry_run)
    held = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    said = "would be masked" if args.dry_run else "masked"
    return {"masked": counts, "dry_run": args.dry_run}, f"records {said}: {held}"


def cmd_stats(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    stats: dict[str, Any] = {
        **coord.get_memory_stats(args.user, args.session),
        "counters": coord.metrics.counters(),
    }
    return stats, json.dumps(stats, indent=2, default=str)


def cmd_health(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    report = coord.health()
    lines = [
        f"{'ok ' if c.get('ok') else 'FAIL'} {name}: "
        + ", ".join(f"{k}={v}" for k, v in c.items() if k != "ok")
        for name, c in report["checks"].items()
    ]
    print_result(args, report, "\n".join(lines))
    return 0 if report["ok"] else 1


def cmd_reembed(args: argparse.Namespace, settings: Settings) -> Answer:
    from memory.admin.reembed import reembed_all

    counts = reembed_all(settings, progress=lambda msg: print(msg, file=sys.stderr))
    return counts, f"re-embedded {counts}"


# --- parser ---------------------------------------------------------------------------
def _k_value(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= k <= 200:
        raise argparse.ArgumentTypeError("k must be between 1 and 200")
    return k


def cmd_maintain(args: argparse.Namespace, coord: MemoryCoordinator) -> Answer:
    from memory.maintenance import Maintenance

    report = Maintenance.of(coord).run(
        user_id=args.user, dry_run=args.dry_run, progress=ProgressLines("maintain")
    )
    # This CLI has no chat model: summaries that fall due wait for the app's runs (or
    # `python -m agent maintain`, which prints the same report).
    return report.as_json(), report.as_text()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m memory", description="CoALA memory on Redis.")
    sub = p.add_subparsers(dest="command", required=True)

    def cmd(
        name: str, fn: Any, help_: str, *, user: bool = False, store: bool = True
    ) -> argparse.ArgumentParser:
        """`store`: `fn` gets the opened coordinator (else the settings: it opens its own)."""
        sp = sub.add_parser(name, help=help_)
        sp.add_argument("--json", action="store_true", help="machine-readable output")
        if user:
            sp.add_argument("--user", required=True)
        sp.set_defaults(fn=fn, store=store)
        return sp

    sp = cmd("redis", cmd_redis, "start/stop/status of the embedded Redis Stack", store=False)
    sp.add_argument(
        "action",
        choices=["start", "stop", "status", "confirm"],
        help="confirm: the Redis answering now is the one to use (writes resume after a "
        "swapped server was detected)",
    )

    sp = cmd("add", cmd_add, "add a memory")
    sp.add_argument("--user")
    sp.add_argument("--type", default="episodic")
    sp.add_argument("--text", required=True)
    sp.add_argument(
        "--kind",
        help="episodic event type (default: guessed from the text and tags), or semantic fact type",
    )
    sp.add_argument("--category")
    sp.add_argument("--context")
    sp.add_argument("--tag", action="append")
    sp.add_argument("--importance", type=float, default=0.5)
    sp.add_argument("--metadata", help="JSON object")
    sp.add_argument("--session")

    sp = cmd("recall", cmd_recall, "recall everything relevant to a query", user=True)
    sp.add_argument("--query", required=True)
    sp.add_argument("--session", default="cli")
    sp.add_argument("--k", type=_k_value, default=5)

    sp = cmd("search", cmd_search, "hybrid search of one memory type", user=True)
    sp.add_argument("--query", required=True)
    sp.add_argument("--type", default="episodic")
    sp.add_argument("--k", type=_k_value, default=10)

    sp = cmd("list", cmd_list, "list memories of a type", user=True)
    sp.add_argument("--type", default="episodic")
    sp.add_argument("--page", type=int, default=1)
    sp.add_argument("--page-size", type=int, default=50)

    sp = cmd("delete", cmd_delete, "delete a memory by id", user=True)
    sp.add_argument("--id", required=True)
    sp.add_argument("--type")

    for name, what in (("pause", "keep it, never recall it"), ("resume", "recall it again")):
        sp = cmd(name, cmd_pause, f"{name} an episodic memory by id ({what})", user=True)
        sp.add_argument("--id", required=True)

    sp = cmd(
        "forget",
        cmd_forget,
        "delete everything that mentions a topic (with a preview)",
        user=True,
        store=False,
    )
    sp.add_argument("--query", required=True, help="the topic: a name, a subject")
    sp.add_argument("--yes", action="store_true", help="no preview, no confirmation")

    sp = cmd("export", cmd_export, "export a user's memories to JSON", user=True)
    sp.add_argument("-o", "--output", required=True, help="file, or - for stdout")

    sp = cmd(
        "import",
        cmd_import,
        "import an export file: checked whole first (a bad file changes nothing), then "
        "written in chunks; one cut off is reported by the next command and finished by "
        "running the same import again",
        store=False,
    )
    sp.add_argument("file")
    sp.add_argument("--user", help="import under this user instead of the file's")
    sp.add_argument("--replace", action="store_true", help="purge the user first")

    sp = cmd(
        "sweep-secrets",
        cmd_sweep_secrets,
        "mask secrets an earlier version stored (memories, facts, procedures, messages)",
    )
    sp.add_argument("--user", help="only this user (default: every user)")
    sp.add_argument("--dry-run", action="store_true", help="count them, change nothing")

    sp = cmd("stats", cmd_stats, "memory counts and counters")
    sp.add_argument("--user")
    sp.add_argument("--session")

    cmd("health", cmd_health, "Redis, modules, indexes, embedder")
    cmd("reembed", cmd_reembed, "recompute every vector with the configured embedder", store=False)

    sp = cmd("maintain", cmd_maintain, "summarise, consolidate, expire and decay memories")
    sp.add_argument("--user", help="only this user (default: every user)")
    sp.add_argument("--dry-run", action="store_true", help="list proposals, change nothing")

    from memory.demo.cli import add_demo_parser

    add_demo_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    bad = invalid_utf8_argument(argv)
    if bad:
        print(f"error: {bad}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    settings = Settings()
    try:
        if getattr(args, "store", False):
            with open_coordinator(settings) as coord:
                answer = args.fn(args, coord)
        else:
            answer = args.fn(args, settings)
        if isinstance(answer, tuple):
            print_result(args, *answer)
            return 0
        return int(answer or 0)
    except MemorySystemError as e:
        if getattr(args, "json", False):
            print(json.dumps({"error": str(e), "type": type(e).__name__}))
        print(f"error: {for_terminal(str(e), multiline=True)}", file=sys.stderr)
        # bad input (text, ids, files) is the caller's to fix, like a usage error: exit 2
        return 2 if isinstance(e, InvalidInputError) else 1
    except BrokenPipeError:  # e.g. `| head`: the reader left; not an error of ours
        sys.stderr.close()
        return 0
