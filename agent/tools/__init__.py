"""Tools for the model: the registry, and the pluggable memory and wellness toolkits."""

from __future__ import annotations

from agent.tools.memory_tools import MemoryToolkit
from agent.tools.registry import ToolContext, Toolkit, ToolRegistry, ToolSpec
from agent.tools.wellness import WellnessDataset, WellnessToolkit

__all__ = [
    "MemoryToolkit",
    "ToolContext",
    "ToolRegistry",
    "ToolSpec",
    "Toolkit",
    "WellnessDataset",
    "WellnessToolkit",
]
