"""What kind of memory a text is, and which changing value it sets.

    classify_event_type(text, tags)  preference, goal, health event, milestone, correction,
                                     feedback or fact: #tags first, then keywords
    detect_slot(text, event_type)    e.g. "goal:weight": a later memory with the same slot
                                     replaces this one (supersession)
    extract_tags(text)               the #tags of a text

Used by every writer (chat, the memory tools, the sidebar, the Memories page, the CLI, MCP)
through `memory.writing.policy`.
"""

from __future__ import annotations

import re

from memory.models import EventType

#: Event type for a plain fact about the user ("my dog is called Rex").
FACT_EVENT_TYPE = EventType.FACT

TAG_RE = re.compile(r"(?<![\w#])#([A-Za-z][\w-]{0,63})")

# #tags that name an event type set it.
TAG_EVENT_TYPES: dict[str, EventType] = {
    "goal": EventType.GOAL,
    "goals": EventType.GOAL,
    "preference": EventType.PREFERENCE,
    "pref": EventType.PREFERENCE,
    "health": EventType.HEALTH_EVENT,
    "injury": EventType.HEALTH_EVENT,
    "milestone": EventType.MILESTONE,
    "pb": EventType.MILESTONE,
    "correction": EventType.CORRECTION,
    "feedback": EventType.FEEDBACK,
}

_EVENT_KEYWORDS: list[tuple[EventType, re.Pattern[str]]] = [
    (
        EventType.CORRECTION,
        re.compile(
            r"\b(that'?s wrong|that is wrong|incorrect|not correct|you were wrong|correction)\b"
        ),
    ),
    (
        EventType.FEEDBACK,
        re.compile(
            r"\b(too (long|verbose|short|detailed)|your (answer|answers|response|responses|reply)"
            r"|less detail|more detail|be more|be less)\b"
        ),
    ),
    (
        EventType.GOAL,
        re.compile(
            r"\b(goal|target|aim(ing)? (to|for)"
            r"|want to (reach|lose|gain|run|get|weigh|sleep|walk|do)"
            r"|trying to|plan(ning)? to|by (january|february|march|april|may|june|july|august"
            r"|september|october|november|december|summer|winter|spring|the end))\b"
        ),
    ),
    (
        EventType.HEALTH_EVENT,
        re.compile(
            r"\b(pain\w*|hurts?|aches?|sore|injur\w*|sick|ill|diagnos\w*|surgery|sprain\w*|fever|migraine|allerg\w*"
            r"|medication|doctor|physio\w*|asthma|diabet\w*|blood pressure)\b"
        ),
    ),
    (
        EventType.MILESTONE,
        re.compile(
            r"\b(first time|personal best|pb|new record|finished my|completed my|achieved"
            r"|ran my first|my first (marathon|half|race|10k|5k))\b"
        ),
    ),
    (
        EventType.PREFERENCE,
        re.compile(
            r"\b(prefer\w*|like|likes|love|hate|dislike|favou?rite|rather|enjoy|always|never"
            r"|don'?t like|do not like)\b"
        ),
    ),
]

# Slots for supersession. A slot is assigned only when exactly one topic matches, so that
# different facts are not merged by a loose match.
_SLOT_TOPICS: dict[EventType, dict[str, re.Pattern[str]]] = {
    EventType.GOAL: {
        "weight": re.compile(r"\b(weigh\w*|kg|kilos?|lbs?|pounds|bmi)\b"),
        "sleep": re.compile(r"\b(sleep\w*|bed ?time|hours a night)\b"),
        "steps": re.compile(r"\bsteps\b"),
        "resting_hr": re.compile(r"\b(resting heart rate|resting hr|heart rate|bpm)\b"),
        "running": re.compile(r"\b(run|running|5k|10k|marathon|half marathon)\b"),
        "workouts_per_week": re.compile(
            r"\b(workouts?|train(ing)?|exercise) (\d+|\w+) (times|days) (a|per) week\b"
        ),
    },
    # Facts about the user that change over months: a move, a new
    # job, a new diet replace the old value instead of standing next to it.
    EventType.FACT: {
        "home": re.compile(r"\b(live in|living in|moved to|moving to|based in|relocat\w*)\b"),
        "job": re.compile(r"\b(work as|working as|my job|new job|work at|employed|started at)\b"),
        "diet": re.compile(
            r"\b(vegan|vegetarian|pescatarian|keto|paleo|diet|gluten[- ]free|eat meat)\b"
        ),
    },
    EventType.PREFERENCE: {
        "units": re.compile(
            r"\b(units|metric|imperial|miles|kilomet(er|re)s|celsius|fahrenheit)\b"
        ),
        "response_style": re.compile(
            r"\b(concise|brief|short answers|detailed|bullet\w*|verbose|long answers|tables?)\b"
        ),
        "workout_time": re.compile(
            r"\b(morning|evening|afternoon|night|early|late)\b.*\b(workouts?|train\w*|exercis\w*"
            r"|runs?|running)\b|\b(workouts?|train\w*|exercis\w*|runs?|running)\b.*"
            r"\b(morning|evening|afternoon|night)s?\b"
        ),
    },
}
SLOTS: list[str] = [
    f"{et.value}:{topic}" for et, topics in _SLOT_TOPICS.items() for topic in topics
]


def classify_event_type(text: str, tags: list[str] | None = None) -> EventType:
    for t in tags or []:
        if t.lower() in TAG_EVENT_TYPES:
            return TAG_EVENT_TYPES[t.lower()]
    low = text.lower()
    for et, pattern in _EVENT_KEYWORDS:
        if pattern.search(low):
            return et
    # "I use miles, not kilometers": a known preference topic even without "prefer".
    if detect_slot(text, EventType.PREFERENCE):
        return EventType.PREFERENCE
    return FACT_EVENT_TYPE


def detect_slot(text: str, event_type: EventType) -> str | None:
    topics = _SLOT_TOPICS.get(event_type)
    if not topics:
        return None
    low = text.lower()
    matched = [name for name, pattern in topics.items() if pattern.search(low)]
    # "weight" and "running" both match "run 5k to lose weight": ambiguous -> no slot.
    return f"{event_type.value}:{matched[0]}" if len(matched) == 1 else None


def extract_tags(message: str) -> list[str]:
    out: list[str] = []
    for t in TAG_RE.findall(message):
        if t.lower() not in out:
            out.append(t.lower())
    return out
