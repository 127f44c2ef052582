"""Exceptions of the agent package. Every message says what to do next.

    AgentError
    ├── LLMError                     anything wrong with the language model
    │   ├── LLMUnavailableError      Ollama not reachable (not running, wrong OLLAMA_HOST)
    │   ├── ModelNotFoundError       the model is not pulled
    │   ├── LLMTimeoutError          no answer within OLLAMA_TIMEOUT_S
    │   ├── LLMLimitError            an answer stopped at its token cap or time limit
    │   └── LLMResponseError         Ollama answered with an error
    │       └── ToolsNotSupportedError  the model cannot call tools
    ├── ToolError                    a tool could not run (returned to the model, never raised
    │   │                            out of a turn)
    │   ├── UnknownToolError         the model asked for a tool that does not exist
    │   └── ToolArgumentsError       arguments missing, of the wrong type, or not an object
    ├── ExtractionError              structured memory extraction failed after its retry
    └── ServerConfigError            the MCP server cannot start (e.g. a bad tokens file)

The `ollama`/`httpx` errors are translated in `agent.llm` only, with `raise ... from e`.
"""

from __future__ import annotations

from pydantic import ValidationError


class AgentError(Exception):
    """Base class of every error raised by the agent package."""


class LLMError(AgentError):
    """The language model could not answer."""


class LLMUnavailableError(LLMError, ConnectionError):
    """Ollama is not reachable."""


class ModelNotFoundError(LLMError, LookupError):
    """The requested model is not pulled on the Ollama server."""


class LLMTimeoutError(LLMError, TimeoutError):
    """Ollama did not answer in time."""


class LLMLimitError(LLMError):
    """An answer reached its token cap (num_predict) or its time limit before it ended.
    `what` is "tokens" or "time"."""

    def __init__(self, message: str, what: str) -> None:
        super().__init__(message)
        self.what = what


class LLMResponseError(LLMError):
    """Ollama answered with an error."""


class ToolsNotSupportedError(LLMResponseError):
    """The model does not support tool calling (Ollama answers 400)."""


class ToolError(AgentError):
    """A tool call failed; the message is shown to the model."""


class UnknownToolError(ToolError, LookupError):
    """No tool of that name is registered."""


class ToolArgumentsError(ToolError, ValueError):
    """The arguments of a tool call do not match its schema."""


class ExtractionError(AgentError):
    """Structured memory extraction failed (after its retry)."""


class ServerConfigError(AgentError, ValueError):
    """The MCP server was started with a configuration it cannot use."""


def describe_validation(e: ValidationError) -> str:
    """What did not validate, for the model to correct: `where: why; ...`."""
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "top level"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)
