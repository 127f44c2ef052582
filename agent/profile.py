"""What a model can do, as Ollama reports it (`POST /api/show`), and the window the agent plans:
AGENT_NUM_CTX, never above what the model was trained for. Without `options.num_ctx` Ollama
picks a window from the machine and cuts what does not fit silently (docs/agent.md), so the
agent sends the window it planned for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field


class ModelProfile(BaseModel):
    """One model's facts from `/api/show`. `context_length` None: the server did not say."""

    model: str
    context_length: int | None = Field(default=None, description="Trained context, tokens")
    capabilities: list[str] = Field(default_factory=list, description="tools, thinking, ...")
    family: str = ""
    parameter_size: str = ""
    quantization: str = ""
    template: str | None = Field(
        default=None, description="The prompt template; None when the server did not say"
    )

    @property
    def known(self) -> bool:
        """The server listed capabilities (Ollama < 0.6.4 lists none: then nothing is known)."""
        return bool(self.capabilities)

    @property
    def tools(self) -> bool:
        """Can call tools, or unknown (a 400 "does not support tools" then tells)."""
        return "tools" in self.capabilities or not self.known

    @property
    def chat_template(self) -> bool:
        """Has a template that renders a conversation: an empty one (a GGUF without a chat
        template) or Ollama's bare `{{ .Prompt }}` marks a base model, which continues text
        instead of answering. True when the server did not say."""
        if self.template is None:
            return True
        return self.template.strip() not in ("", "{{ .Prompt }}")

    @property
    def thinking(self) -> bool:
        return "thinking" in self.capabilities

    @classmethod
    def from_show(cls, model: str, show: Mapping[str, Any]) -> ModelProfile:
        """From the JSON of `/api/show` (keys as Ollama sends them)."""
        info = show.get("model_info") or show.get("modelinfo") or {}
        details = show.get("details") or {}
        context = None
        arch = info.get("general.architecture")
        if arch and isinstance(info.get(f"{arch}.context_length"), int):
            context = int(info[f"{arch}.context_length"])
        else:  # an architecture key we do not know: any "<arch>.context_length"
            for key, value in info.items():
                if str(key).endswith(".context_length") and isinstance(value, int):
                    context = int(value)
                    break
        return cls(
            model=model,
            context_length=context if context and context > 0 else None,
            capabilities=[str(c) for c in show.get("capabilities") or []],
            family=str(details.get("family") or arch or ""),
            parameter_size=str(details.get("parameter_size") or ""),
            quantization=str(details.get("quantization_level") or ""),
            template=None if show.get("template") is None else str(show.get("template")),
        )

    def describe(self) -> str:
        """One line for the sidebar and `agent status`."""
        bits = [b for b in (self.family, self.parameter_size, self.quantization) if b]
        ctx = f"{self.context_length:,} tokens" if self.context_length else "context unknown"
        caps = ", ".join(c for c in self.capabilities if c != "completion") or "no tools"
        return f"{' · '.join(bits) or self.model} · {ctx} · {caps}"


def planned_window(setting: int, profile: ModelProfile | None) -> int:
    """The num_ctx every request sends: the setting, capped at the model's trained context."""
    if profile is not None and profile.context_length:
        return min(setting, profile.context_length)
    return setting
