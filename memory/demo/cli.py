"""`python -m memory demo load|reset`: the demo persona from the command line, registered on the
`python -m memory` parser by `add_demo_parser`."""

from __future__ import annotations

import argparse
import json
import sys

from memory.config import Settings
from memory.demo.training import DEMO_USER
from memory.terminal import for_terminal, open_coordinator, print_result


def add_demo_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `demo load` and `demo reset`."""
    sp = subparsers.add_parser("demo", help="load or remove the demo persona (a runner's months)")
    demo = sp.add_subparsers(dest="action", required=True)
    for action, help_ in (
        ("load", "write the persona into a user (idempotent; refused over their own memories)"),
        ("reset", "remove the demo and all made with it: the user's chats, memories, usage"),
    ):
        dp = demo.add_parser(action, help=help_)
        dp.add_argument("--json", action="store_true", help="machine-readable output")
        dp.add_argument("--user", default=DEMO_USER, help=f"default: {DEMO_USER}")
        dp.set_defaults(fn=cmd_demo)
        if action == "load":
            dp.add_argument(
                "--replace", action="store_true", help="purge the user's own memories first"
            )


def cmd_demo(args: argparse.Namespace, settings: Settings) -> int:
    """Load the demo persona into a user (refused, exit 2, over memories of their own unless
    --replace), or remove it with all made with it (memory.demo.reset_demo)."""
    from memory.demo import DEMO_PREFIX, OwnMemoriesError, load_demo, reset_demo

    user = for_terminal(args.user)
    with open_coordinator(settings) as coord:
        if args.action == "reset":
            report = reset_demo(coord, args.user)
            payload = {k: v for k, v in report.as_json().items() if k != "replaced"}
            said = (
                f"removed the demo persona and all made with it from {user}: "
                f"{report.episodic} episodic records, {report.semantic} facts, "
                f"{report.procedural} procedures, {report.sessions} sessions "
                f"({report.messages} messages)"
                if any(payload[k] for k in ("episodic", "semantic", "procedural", "sessions"))
                else f"{user} holds no demo persona: nothing was removed"
            )
            print_result(args, payload, said)
            return 0
        say = None if args.json else (lambda line: print(for_terminal(line), file=sys.stderr))
        try:
            report = load_demo(coord, args.user, replace=args.replace, progress=say)
        except OwnMemoriesError as e:
            msg = (
                f"{e} Load it into another user (--user NAME), or add --replace to purge "
                f"everything of {args.user!r} first."
            )
            if args.json:
                print(json.dumps({"error": msg, "type": "OwnMemoriesError"}, ensure_ascii=False))
            print(f"error: {for_terminal(msg)}", file=sys.stderr)
            return 2
    lines = [
        f"loaded the demo persona into {user}"
        + (" (their own memories were purged first)" if report.replaced else "")
        + f": {report.episodic} episodic records (memories, logged exchanges, summaries), "
        f"{report.semantic} facts, "
        f"{report.procedural} procedures, {report.sessions} sessions ({report.messages} "
        "messages)",
        f'try it: make run, pick the user {user}, and ask "Plan my running this week"',
    ]
    notes = [for_terminal(n) for n in report.notes]
    if not args.user.startswith(DEMO_PREFIX):
        notes.append(
            f"the wellness tools follow the persona's training only for user ids starting "
            f"with {DEMO_PREFIX!r}; {user}'s workouts stay random"
        )
    print_result(args, report.as_json(), "\n".join(lines))
    for note in notes:  # on stderr: --json keeps stdout to the summary
        print(f"note: {note}", file=sys.stderr)
    return 0
