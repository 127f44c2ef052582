"""The demo persona: months of believable memory for one person, to show the app with
(`python -m memory demo load|reset`: docs/demo.md). `training` is her plan (the one source of
her dates and distances), `persona` reads `memory/data/demo_persona.toml`, `loader` loads and
resets through the coordinator."""

from memory.demo.loader import (
    DEMO_TAG,
    OwnMemoriesError,
    demo_contents,
    load_demo,
    reset_demo,
)
from memory.demo.persona import DEMO_QUESTIONS, build_persona
from memory.demo.training import DEMO_PREFIX, DEMO_USER

__all__ = [
    "DEMO_PREFIX",
    "DEMO_QUESTIONS",
    "DEMO_TAG",
    "DEMO_USER",
    "OwnMemoriesError",
    "build_persona",
    "demo_contents",
    "load_demo",
    "reset_demo",
]
