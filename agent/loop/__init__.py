"""The answer loop."""

from agent.loop.agent import ChatAgent

__all__ = ["ChatAgent"]
