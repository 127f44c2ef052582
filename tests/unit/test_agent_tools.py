"""Tool registry, the wellness toolkit and the memory tools."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import Field

from agent.tools.memory_tools import MemoryToolkit
from agent.tools.registry import ToolContext, ToolRegistry
from agent.tools.wellness import WellnessDataset, WellnessToolkit
from memory.writing import WritePolicy
from tests.fakes.fake_coordinator import FakeCoordinator

TODAY = date(2026, 11, 20)


def _registry(coord: FakeCoordinator | None = None) -> ToolRegistry:
    coord = coord or FakeCoordinator()
    return ToolRegistry([MemoryToolkit(coord, WritePolicy(coord)), WellnessToolkit(today=TODAY)])


def test_schemas_come_from_type_hints_and_docstrings() -> None:
    def lookup(
        ctx: ToolContext,
        city: Annotated[str, Field(description="the city name")],
        unit: Literal["c", "f"] = "c",
        days: Annotated[int, Field(ge=1, le=7, description="forecast length")] = 1,
    ) -> dict:
        """Weather for
        a city."""
        return {}

    reg = ToolRegistry()
    reg.register(lookup)
    fn = reg.schemas()[0]["function"]
    assert fn["name"] == "lookup" and fn["description"] == "Weather for a city."
    props = fn["parameters"]["properties"]
    assert set(props) == {"city", "unit", "days"}  # the context is not shown to the model
    assert props["unit"]["enum"] == ["c", "f"]
    assert props["days"]["description"] == "forecast length (range 1..7) (default: 1)"
    assert props["city"]["description"] == "the city name"
    assert fn["parameters"]["required"] == ["city"]


def test_every_registered_tool_schema_is_accepted_by_the_ollama_client() -> None:
    from ollama._types import Tool

    reg = _registry()
    assert set(reg.names()) == {
        "remember_information",
        "recall_information",
        "get_memory_stats",
        "forget_memory",
        "search_workouts",
        "aggregate_metrics",
        "compare_periods",
        "trend_analysis",
    }
    for schema in reg.schemas():
        Tool.model_validate(schema)


def test_malformed_arguments_come_back_as_errors_that_name_the_problem() -> None:
    reg, ctx = _registry(), ToolContext("alice", "s")
    cases = {
        "bad enum": ("aggregate_metrics", {"metric": "happiness"}, "metric"),
        "missing": ("aggregate_metrics", {}, "metric: Field required"),
        "wrong type": ("search_workouts", {"days": "lots"}, "days"),
        "extra key": ("search_workouts", {"colour": "red"}, "colour"),
        "not an object": ("search_workouts", [1, 2], "must be a JSON object"),
        "bad json string": ("search_workouts", "{days: 3", "not valid JSON"),
        "unknown tool": ("delete_everything", {}, "no tool named"),
    }
    for label, (name, args, expected) in cases.items():
        rec = reg.execute(name, args, ctx)
        assert rec.error is not None and expected in rec.error, label
        assert rec.result is None


def test_json_string_arguments_are_accepted() -> None:
    rec = _registry().execute(
        "aggregate_metrics", '{"metric": "steps", "days": 3}', ToolContext("a", "s")
    )
    assert rec.error is None and rec.result["count"] == 3


def test_wellness_data_is_deterministic_per_seed_and_user() -> None:
    a1 = WellnessToolkit(seed=7, today=TODAY).dataset("alice")
    a2 = WellnessToolkit(seed=7, today=TODAY).dataset("alice")
    b = WellnessToolkit(seed=7, today=TODAY).dataset("bob")
    assert a1.days == a2.days and a1.workouts == a2.workouts
    assert a1.days != b.days
    assert WellnessDataset.generate(1, 30, TODAY).days[-1].date == "2026-11-20"


def test_wellness_tools_answer_with_numbers_and_periods() -> None:
    reg, ctx = _registry(), ToolContext("alice", "s")
    sleep = reg.execute("aggregate_metrics", {"metric": "sleep_hours", "days": 7}, ctx).result
    assert sleep["unit"] == "hours" and sleep["count"] == 7 and 3 < sleep["value"] < 11
    assert sleep["period"] == {"from": "2026-11-14", "to": "2026-11-20"}
    cmp = reg.execute("compare_periods", {"metric": "weight_kg", "period_days": 7}, ctx).result
    assert cmp["current"]["to"] == "2026-11-20" and cmp["previous"]["to"] == "2026-11-13"
    assert cmp["change"] == round(cmp["current"]["value"] - cmp["previous"]["value"], 2)
    trend = reg.execute("trend_analysis", {"metric": "resting_hr", "days": 60}, ctx).result
    assert trend["direction"] in {"rising", "falling", "flat"} and trend["count"] == 60
    workouts = reg.execute("search_workouts", {"days": 30}, ctx).result
    assert workouts["count"] == len(workouts["workouts"]) or workouts["count"] > 20
    assert all(w["date"] >= "2026-10-22" for w in workouts["workouts"])


def test_a_search_that_finds_nothing_is_marked_empty() -> None:
    reg, ctx = _registry(), ToolContext("alice", "s")
    rec = reg.execute("search_workouts", {"days": 1, "min_duration_min": 10_000}, ctx)
    assert rec.error is None and rec.empty and rec.result["count"] == 0


def test_asking_for_more_history_than_exists_is_an_error_for_the_model() -> None:
    rec = _registry().execute(
        "trend_analysis", {"metric": "steps", "days": 1000}, ToolContext("a", "s")
    )
    assert rec.error is not None and "Only the last 180 days" in rec.error


def test_memory_tools_are_scoped_to_the_turns_user() -> None:
    coord = FakeCoordinator()
    reg = _registry(coord)
    alice, bob = ToolContext("alice", "s"), ToolContext("bob", "s")
    rec = reg.execute("remember_information", {"content": "I am allergic to peanuts"}, alice)
    assert rec.result["stored"] is True and alice.stored[0].how == "tool"
    assert alice.stored[0].event_type == "health_event"
    found = reg.execute("recall_information", {"query": "allergic to peanuts"}, bob).result
    assert found["count"] == 0
    found = reg.execute("recall_information", {"query": "allergic to peanuts"}, alice).result
    assert found["memories"][0]["text"] == "I am allergic to peanuts"
    # Bob cannot forget Alice's memory even with its id.
    rec = reg.execute("forget_memory", {"memory_id": found["memories"][0]["id"]}, bob)
    assert rec.error is not None
    assert coord.active_texts("alice") == ["I am allergic to peanuts"]
    rec = reg.execute("forget_memory", {"memory_id": found["memories"][0]["id"]}, alice)
    assert rec.error is None and coord.active_texts("alice") == []


def test_the_chat_forget_tool_pauses_and_resumes_a_memory() -> None:
    coord = FakeCoordinator()
    reg, ctx = _registry(coord), ToolContext("alice", "s")
    mid = reg.execute("remember_information", {"content": "I am allergic to peanuts"}, ctx)
    mid = mid.result["id"]
    rec = reg.execute("forget_memory", {"memory_id": mid, "action": "pause"}, ctx)
    assert rec.result == {"memory_type": "episodic", "id": mid, "paused": True}
    assert reg.execute("recall_information", {"query": "peanuts"}, ctx).result["count"] == 0
    assert coord.user_profile("alice") == [] and coord.episodic[mid].paused
    rec = reg.execute("forget_memory", {"memory_id": mid, "action": "resume"}, ctx)
    assert rec.result["paused"] is False and [p.id for p in coord.user_profile("alice")] == [mid]
    rec = reg.execute("forget_memory", {"memory_id": mid, "action": "archive"}, ctx)
    assert rec.error is not None and not coord.episodic[mid].paused  # not an action
    bob = ToolContext("bob", "s")
    assert reg.execute("forget_memory", {"memory_id": mid, "action": "pause"}, bob).error


def test_remember_information_does_not_store_a_duplicate() -> None:
    coord = FakeCoordinator()
    reg, ctx = _registry(coord), ToolContext("alice", "s")
    reg.execute("remember_information", {"content": "I prefer metric units"}, ctx)
    rec = reg.execute("remember_information", {"content": "i prefer metric units."}, ctx)
    assert rec.result["stored"] is False and "duplicate" in rec.result["reason"]
    assert coord.active_texts("alice") == ["I prefer metric units"]


def test_get_memory_stats_counts_only_the_users_memories() -> None:
    coord = FakeCoordinator()
    reg = _registry(coord)
    reg.execute("remember_information", {"content": "I like yoga"}, ToolContext("alice", "s"))
    stats = reg.execute("get_memory_stats", {}, ToolContext("bob", "s")).result
    assert stats["episodic"]["memory_count"] == 0
    mine = reg.execute("get_memory_stats", {}, ToolContext("alice", "s")).result
    assert mine["episodic"]["memory_count"] == 1
