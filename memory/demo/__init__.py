"""The demo persona: months of believable memory for one person, to show the app with
(`python -m memory demo load|reset`: docs/demo.md).

training.py  her training plan, the one source of her dates and distances (the wellness
             tools' synthetic data follows it for user ids starting with `demo-`)
persona.py   the persona, read from `memory/data/demo_persona.toml`: dated conversations,
             what she stated, summaries, facts, learned procedures, the questions that
             show them off
loader.py    load and reset through the coordinator's public methods; what marks demo data"""

from memory.demo.loader import (
    DEMO_SOURCE,
    DEMO_TAG,
    DemoReport,
    OwnMemoriesError,
    UserContents,
    demo_contents,
    is_demo_session,
    load_demo,
    reset_demo,
)
from memory.demo.persona import DEMO_QUESTIONS, build_persona
from memory.demo.training import DEMO_PREFIX, DEMO_USER, planned_workout

__all__ = [
    "DEMO_PREFIX",
    "DEMO_QUESTIONS",
    "DEMO_SOURCE",
    "DEMO_TAG",
    "DEMO_USER",
    "DemoReport",
    "OwnMemoriesError",
    "UserContents",
    "build_persona",
    "demo_contents",
    "is_demo_session",
    "load_demo",
    "planned_workout",
    "reset_demo",
]
