"""Tool calls written as text by small models: parsing them, and holding them back while
the answer streams."""

from __future__ import annotations

import json
import random
from functools import partial
from typing import Annotated, Literal

import pytest
from pydantic import Field

from agent.llm import ToolCall
from agent.tools.registry import ToolContext, ToolRegistry
from agent.tools.text_calls import (
    MAX_CALLS,
    MAX_TEXT_CHARS,
    TextCallFilter,
    TextToolCalls,
    parse_text_tool_calls,
)


def search_workouts(
    ctx: ToolContext,
    days: Annotated[int, Field(ge=1, le=365, description="how many days back")] = 7,
    kind: Annotated[
        Literal["run", "swim"] | None, Field(description="only this kind of workout")
    ] = None,
) -> list[dict]:
    """Workouts of the last N days."""
    return []


def remember(ctx: ToolContext, text: Annotated[str, Field(description="the fact")]) -> dict:
    """Store a fact about the user."""
    return {}


def memory_stats(ctx: ToolContext) -> dict:
    """How many memories are stored."""
    return {}


REGISTRY = ToolRegistry()
for _func in (search_workouts, remember, memory_stats):
    REGISTRY.register(_func)
OFFERED = {
    name: partial(ToolRegistry._parse_arguments, REGISTRY.get(name)) for name in REGISTRY.names()
}

CALL = '{"name": "search_workouts", "arguments": {"days": 14, "kind": "run"}}'
CALL2 = '{"name": "remember", "arguments": {"text": "likes running"}}'


def parse(content: str) -> TextToolCalls | None:
    return parse_text_tool_calls(content, OFFERED)


def calls_of(content: str) -> list[ToolCall]:
    parsed = parse(content)
    assert parsed is not None, content
    return parsed.calls


# ---- whole-answer JSON ----------------------------------------------------------------------
def test_a_plain_json_object_is_a_call() -> None:
    parsed = parse(f"  {CALL}\n")
    assert parsed == TextToolCalls(
        [ToolCall("search_workouts", {"days": 14, "kind": "run"})], prose=""
    )


def test_parameters_is_accepted_for_arguments() -> None:
    content = '{"name": "search_workouts", "parameters": {"days": 3}}'
    assert calls_of(content) == [ToolCall("search_workouts", {"days": 3})]


def test_llama_style_type_and_ollama_style_function_wrapper() -> None:
    llama = '{"type": "function", "name": "remember", "parameters": {"text": "x"}}'
    wrapped = '{"type": "function", "function": {"name": "remember", "arguments": {"text": "x"}}}'
    assert calls_of(llama) == calls_of(wrapped) == [ToolCall("remember", {"text": "x"})]


@pytest.mark.parametrize(
    "fence", ["```json\n{}\n```", "```\n{}\n```", "```JSON\n{}", "```json\n{}```"]
)
def test_a_fenced_call_is_a_call(fence: str) -> None:
    content = fence.replace("{}", CALL)
    assert calls_of(content) == [ToolCall("search_workouts", {"days": 14, "kind": "run"})]


def test_a_fence_in_another_language_is_not_a_call() -> None:
    assert parse(f"```python\n{CALL}\n```") is None


def test_a_list_of_two_calls() -> None:
    assert [c.name for c in calls_of(f"[{CALL}, {CALL2}]")] == ["search_workouts", "remember"]
    assert [c.name for c in calls_of(f"```json\n[{CALL},\n {CALL2}]\n```")] == [
        "search_workouts",
        "remember",
    ]


def test_objects_one_after_another() -> None:
    assert [c.name for c in calls_of(f"{CALL}\n{CALL2}")] == ["search_workouts", "remember"]


def test_arguments_as_a_json_string_are_decoded() -> None:
    content = json.dumps({"name": "search_workouts", "arguments": json.dumps({"days": 2})})
    assert calls_of(content) == [ToolCall("search_workouts", {"days": 2})]


def test_a_tool_without_parameters_needs_no_arguments() -> None:
    assert calls_of('{"name": "memory_stats"}') == [ToolCall("memory_stats", {})]
    assert calls_of('{"name": "memory_stats", "arguments": null}') == [ToolCall("memory_stats", {})]


def test_arguments_are_kept_as_the_model_wrote_them() -> None:
    # The registry validates (and coerces) again when it runs the call; the message history
    # keeps what the model sent.
    assert calls_of('{"name": "search_workouts", "arguments": {"days": "5"}}') == [
        ToolCall("search_workouts", {"days": "5"})
    ]


# ---- <tool_call> tags -----------------------------------------------------------------------
def test_a_tag_after_a_sentence_of_prose() -> None:
    parsed = parse(f"I'll look at your runs.\n<tool_call>\n{CALL}\n</tool_call>")
    assert parsed is not None
    assert parsed.calls == [ToolCall("search_workouts", {"days": 14, "kind": "run"})]
    assert parsed.prose == "I'll look at your runs."


def test_two_tag_blocks_and_prose_around_them() -> None:
    content = f"First this.\n<tool_call>{CALL}</tool_call>\n<tool_call>{CALL2}</tool_call>\nDone."
    parsed = parse(content)
    assert parsed is not None
    assert [c.name for c in parsed.calls] == ["search_workouts", "remember"]
    assert parsed.prose == "First this.\n\nDone."


def test_the_closing_tag_may_be_missing_at_the_very_end() -> None:
    parsed = parse(f"<tool_call>{CALL2}</tool_call><tool_call>\n{CALL}\n")
    assert parsed is not None and [c.name for c in parsed.calls] == ["remember", "search_workouts"]
    assert parsed.prose == ""


def test_a_missing_closing_tag_before_more_text_is_not_a_call() -> None:
    assert parse(f"<tool_call>{CALL} and then some words") is None


def test_tags_inside_a_fence_leave_no_prose() -> None:
    parsed = parse(f"```json\n<tool_call>{CALL}</tool_call>\n```")
    assert parsed is not None and parsed.prose == "" and len(parsed.calls) == 1


def test_a_fenced_or_listed_body_inside_a_tag() -> None:
    assert len(calls_of(f"<tool_call>```json\n{CALL}\n```</tool_call>")) == 1
    assert len(calls_of(f"<tool_call>[{CALL}, {CALL2}]</tool_call>")) == 2


# ---- not calls: shown as is -----------------------------------------------------------------
@pytest.mark.parametrize(
    "content",
    [
        '{"name": "delete_everything", "arguments": {}}',
        f"<tool_call>{CALL}</tool_call><tool_call>"
        '{"name": "delete_everything", "arguments": {}}</tool_call>',
        f'[{CALL}, {{"name": "delete_everything", "arguments": {{}}}}]',
    ],
)
def test_an_unknown_tool_anywhere_means_no_call_at_all(content: str) -> None:
    assert parse(content) is None


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "search_workouts", "arguments": {"days": 0}}',  # out of range
        '{"name": "search_workouts", "arguments": {"colour": "red"}}',  # extra argument
        '{"name": "remember", "arguments": {}}',  # missing argument
        '{"name": "remember", "arguments": [1, 2]}',
        '{"name": "remember", "arguments": "{text: oops"}',  # a string that is not JSON
        '{"name": "remember", "arguments": {"text": "a"}, "parameters": {"text": "b"}}',
        '{"name": "remember", "arguments": {"text": "a"}, "confidence": 0.9}',  # unknown key
        '{"name": "remember", "arguments": {"text": "a"}, "type": "lookup"}',
        f'<tool_call>{CALL}</tool_call><tool_call>{{"name": "remember"}}</tool_call>',
        "<tool_call>not json</tool_call>",
        "<tool_call></tool_call>",
    ],
)
def test_invalid_arguments_or_shapes_mean_no_call(content: str) -> None:
    assert parse(content) is None


@pytest.mark.parametrize(
    "content",
    [
        f"Here is the JSON you asked for: {CALL}",
        f"Here it is:\n```json\n{CALL}\n```",
        f"{CALL}\nThat is what a call looks like.",
        '{"name": "Alice", "age": 31}',
        "[1, 2, 3]",
        "[]",
        "{}",
        "You ran 3 times this week; a < b and <b>bold</b>.",
        "",
        "   ",
    ],
)
def test_ordinary_answers_are_not_calls(content: str) -> None:
    assert parse(content) is None


def test_nothing_is_a_call_when_no_tool_is_offered() -> None:
    assert parse_text_tool_calls(CALL, {}) is None
    assert parse_text_tool_calls(CALL, {"remember": OFFERED["remember"]}) is None


def test_a_validator_that_raises_anything_rejects_the_call() -> None:
    def boom(arguments: dict) -> object:
        raise RuntimeError("no")

    assert parse_text_tool_calls(CALL, {"search_workouts": boom}) is None


def test_huge_or_hostile_text_is_refused() -> None:
    padded = json.dumps({"name": "remember", "arguments": {"text": "x" * MAX_TEXT_CHARS}})
    assert parse(padded) is None
    assert parse("[" * (MAX_TEXT_CHARS // 2)) is None  # deep nesting: no RecursionError
    assert parse("<tool_call>" + "[" * 5000 + "</tool_call>") is None
    many = "\n".join([CALL] * (MAX_CALLS + 1))
    assert parse(many) is None
    assert parse("".join(f"<tool_call>{CALL}</tool_call>" for _ in range(MAX_CALLS + 1))) is None
    assert len(calls_of("\n".join([CALL] * MAX_CALLS))) == MAX_CALLS


# ---- the streaming filter -------------------------------------------------------------------
def stream(pieces: list[str]) -> tuple[list[str], str]:
    """(what each feed released, what finish returned)."""
    f = TextCallFilter()
    shown = [f.feed(p) for p in pieces]
    return shown, f.finish()


def test_prose_streams_with_no_delay() -> None:
    shown, tail = stream(["You ran ", "three times ", "this week."])
    assert shown == ["You ran ", "three times ", "this week."] and tail == ""


def test_a_json_call_is_held_until_finish() -> None:
    f = TextCallFilter()
    pieces = ['{"na', 'me": "search', '_workouts", "arguments": ', '{"days": 14}}']
    assert [f.feed(p) for p in pieces] == ["", "", "", ""]
    assert f.held == "".join(pieces)
    tail = f.finish()
    assert tail == "".join(pieces) and f.held == ""
    assert calls_of(tail) == [ToolCall("search_workouts", {"days": 14})]


@pytest.mark.parametrize("start", ["[", "```", "```json\n", "\n  {", "``"])
def test_the_start_of_a_call_form_is_held(start: str) -> None:
    shown, tail = stream([start])
    assert shown == [""] and tail == start


def test_json_that_cannot_be_a_call_is_released_once_its_first_key_shows() -> None:
    f = TextCallFilter()
    assert f.feed('{"i') == ""  # could still be "id"
    assert f.feed('sbn": "978-3"}') == '{"isbn": "978-3"}'
    assert f.finish() == ""
    shown, tail = stream(['{"ci', 'ty": "Paris"}'])  # no call key starts with "ci"
    assert shown == ['{"ci', 'ty": "Paris"}'] and tail == ""
    shown, tail = stream(["```python\n", "print(1)\n```"])
    assert shown == ["```python\n", "print(1)\n```"] and tail == ""
    shown, tail = stream(["[1, ", "2]"])
    assert shown == ["[1, ", "2]"] and tail == ""


def test_a_tool_call_tag_is_held_from_the_tag_on() -> None:
    f = TextCallFilter()
    assert f.feed("Let me check. ") == "Let me check. "
    assert f.feed(f"<tool_call>{CALL}") == ""
    assert f.feed("</tool_call>\nBack soon.") == ""
    tail = f.finish()
    assert tail == f"<tool_call>{CALL}</tool_call>\nBack soon."
    parsed = parse(tail)
    assert parsed is not None and parsed.prose == "Back soon." and len(parsed.calls) == 1


@pytest.mark.parametrize("text", ["a < b", "<b>bold</b>", "x <tool> y", "<tool_cal>", "< tool"])
def test_other_angle_brackets_are_released(text: str) -> None:
    shown, tail = stream([text])
    assert shown == [text] and tail == ""


def test_a_tag_split_across_pieces_is_still_held() -> None:
    f = TextCallFilter()
    assert f.feed("Checking <to") == "Checking "
    assert f.held == "<to"
    assert f.feed("ol_call>") == ""
    assert f.feed(CALL) == ""
    assert f.finish() == f"<tool_call>{CALL}"
    f = TextCallFilter()
    assert f.feed("a <") == "a "
    assert f.feed("b> c") == "<b> c"


def test_a_partial_tag_at_the_end_is_returned_by_finish() -> None:
    shown, tail = stream(["see <tool_"])
    assert shown == ["see "] and tail == "<tool_"
    assert parse(tail) is None  # the caller shows it as is


SAMPLES = [
    CALL,
    f"  \n```json\n[{CALL}, {CALL2}]\n```\n",
    f"I'll check.\n<tool_call>\n{CALL}\n</tool_call>\n<tool_call>{CALL2}</tool_call>",
    "Plain prose with a < b, <b>tags</b> and <tool> words.",
    '{"city": "Paris", "name": "x"}',
    '{"n\\u0061me": "remember", "arguments": {"text": "x"}}',
    "```python\nprint('<tool_call>')\n```",
    "[ 1, 2 ]",
    "{" + " " * 100 + '"city": 1}',
    "```" + " " * 80 + "json\n{}",
    "<tool_call",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_piece_boundaries_do_not_change_what_is_shown(text: str) -> None:
    whole_shown, whole_tail = stream([text])
    assert "".join(whole_shown) + whole_tail == text
    rng = random.Random(text)
    splits = [list(text)] + [
        [text[:i], text[i:]] for i in range(len(text) + 1)
    ]  # every single cut, and one char at a time
    for _ in range(20):
        cuts = sorted(rng.sample(range(len(text) + 1), min(4, len(text) + 1)))
        splits.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    for pieces in splits:
        shown, tail = stream(pieces)
        assert "".join(shown) + tail == text
        assert tail == whole_tail, pieces


@pytest.mark.parametrize("text", SAMPLES[:3])
def test_a_call_never_flashes_on_the_screen(text: str) -> None:
    for pieces in ([text], list(text)):
        shown, tail = stream(pieces)
        parsed = parse(tail)
        assert parsed is not None
        assert '"name"' not in "".join(shown)


def test_a_huge_held_answer_is_released_past_the_limit() -> None:
    f = TextCallFilter(max_chars=100)
    assert f.feed('{"name": "remember", "arguments": {"text": "') == ""
    released = f.feed("x" * 100)
    assert released.startswith('{"name"') and f.held == ""
    assert f.feed("more") == "more"  # from then on everything passes
    assert f.finish() == ""
    f = TextCallFilter(max_chars=100)
    assert f.feed("ok <tool_call>") == "ok "
    assert f.feed("y" * 200).endswith("y") and f.finish() == ""
