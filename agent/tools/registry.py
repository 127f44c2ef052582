"""A registry of typed Python functions exposed to the model as tools: from each function's
hints and docstring, a pydantic model validates the arguments and a JSON schema goes to Ollama
(docs/agent.md, "Tools"). `execute()` never raises: errors return to the model in the record."""

from __future__ import annotations

import inspect
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agent.errors import ToolArgumentsError, ToolError, UnknownToolError, describe_validation
from agent.types import StoredMemory, ToolCallRecord

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 6000


@dataclass
class ToolContext:
    """Who the tool runs for. Tools append the memories they write to `stored`."""

    user_id: str
    session_id: str
    stored: list[StoredMemory] = field(default_factory=list)
    #: What supports a memory the model asks to keep: what the user said in this conversation
    #: (the message, the history in the prompt) and this turn's tool results (the user's own
    #: data). None: a caller that is not a model acting for this user (the MCP client speaks
    #: for itself), no check.
    grounding_texts: list[str] | None = None


class Toolkit(Protocol):
    name: str

    def tools(self) -> list[Callable[..., Any]]: ...


@dataclass
class ToolSpec:
    name: str
    description: str
    func: Callable[..., Any]
    args_model: type[BaseModel]
    schema: dict[str, Any]
    context_param: str | None
    toolkit: str = ""


_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def _wire_property(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Simplify one pydantic JSON-schema property to what Ollama's Tool model carries."""
    if "$ref" in prop:
        prop = {
            **defs.get(prop["$ref"].split("/")[-1], {}),
            **{k: v for k, v in prop.items() if k != "$ref"},
        }
    if "anyOf" in prop:  # Optional[X] -> X
        options = [o for o in prop["anyOf"] if o.get("type") != "null"]
        base = _wire_property(options[0], defs) if options else {"type": "string"}
        merged = {**base, **{k: v for k, v in prop.items() if k not in ("anyOf", "default")}}
        return _wire_property(merged, defs)
    out: dict[str, Any] = {}
    if prop.get("type") in _JSON_TYPES:
        out["type"] = prop["type"]
    elif "enum" in prop:
        out["type"] = "string"
    if "enum" in prop:
        out["enum"] = prop["enum"]
    if "items" in prop:
        out["items"] = _wire_property(prop["items"], defs)
    desc = prop.get("description", "")
    lo, hi = prop.get("minimum"), prop.get("maximum")
    if lo is not None or hi is not None:
        desc = (desc + f" (range {'' if lo is None else lo}..{'' if hi is None else hi})").strip()
    if "default" in prop and prop["default"] is not None:
        desc = (desc + f" (default: {json.dumps(prop['default'])})").strip()
    if desc:
        out["description"] = desc
    return out


def build_spec(func: Callable[..., Any], *, toolkit: str = "") -> ToolSpec:
    name = func.__name__
    # The docstring describes the tool; each argument's Field (its annotation) describes it.
    description = " ".join(inspect.cleandoc(func.__doc__ or "").split())
    hints = get_type_hints(func, include_extras=True)
    fields: dict[str, Any] = {}
    context_param: str | None = None
    for pname, param in inspect.signature(func).parameters.items():
        if pname == "self":
            continue
        ann = hints.get(pname, Any)
        if ann is ToolContext or ann == "ToolContext":
            context_param = pname
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[pname] = (ann, Field(default))
    args_model = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)
    js = args_model.model_json_schema()
    defs = js.get("$defs", {})
    props = {k: _wire_property(v, defs) for k, v in js.get("properties", {}).items()}
    schema = {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": props,
                "required": list(js.get("required", [])),
            },
        },
    }
    return ToolSpec(name, description, func, args_model, schema, context_param, toolkit)


def is_empty_result(result: Any) -> bool:
    """None, an empty container, or a dict reporting `count: 0` / `empty: true`."""
    if result is None:
        return True
    if isinstance(result, list | tuple | set | str) and not result:
        return True
    if isinstance(result, dict):
        if not result:
            return True
        if result.get("empty") is True:
            return True
        if result.get("count") == 0:
            return True
    return False


def result_for_model(record: ToolCallRecord) -> str:
    """The tool message content sent back to the model."""
    if record.error is not None:
        payload: Any = {"error": record.error}
    else:
        payload = record.result
    try:
        text = json.dumps(payload, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = json.dumps(str(payload))
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + '..." (truncated)'
    return text


class ToolRegistry:
    """Holds tool specs; builds the schemas for the model; runs calls safely."""

    def __init__(self, toolkits: Iterable[Toolkit] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for toolkit in toolkits:
            for func in toolkit.tools():
                self.register(func, toolkit=toolkit.name)

    def register(self, func: Callable[..., Any], *, toolkit: str = "") -> ToolSpec:
        spec = build_spec(func, toolkit=toolkit)
        if spec.name in self._specs:
            raise ValueError(f"A tool named {spec.name!r} is already registered.")
        self._specs[spec.name] = spec
        return spec

    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def toolkit_of(self, name: str) -> str:
        return self._specs[name].toolkit

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def schemas(self) -> list[dict[str, Any]]:
        return [s.schema for s in self.specs()]

    def __len__(self) -> int:
        return len(self._specs)

    def validate(self, name: str, arguments: Any) -> dict[str, Any]:
        """The arguments of a call to `name`, validated; raises ToolError when the tool is
        unknown or they do not fit its schema (used to judge tool calls written as text)."""
        spec = self._specs.get(name)
        if spec is None:
            raise UnknownToolError(
                f"There is no tool named {name!r}. Available tools: {', '.join(self._specs)}."
            )
        return self._parse_arguments(spec, arguments)

    def execute(self, name: str, arguments: Any, ctx: ToolContext) -> ToolCallRecord:
        """Run one call. Never raises: failures come back in `record.error`."""
        t0 = time.perf_counter()
        shown_args = arguments if isinstance(arguments, dict) else {"_raw": arguments}
        result, error = None, None
        try:
            shown_args = self.validate(name, arguments)
            spec = self._specs[name]
            call_args = dict(shown_args)
            if spec.context_param:
                call_args[spec.context_param] = ctx
            result = spec.func(**call_args)
        except (ToolError, ValueError, LookupError) as e:
            # ToolError and the memory package's InvalidInputError/NotFoundError: the message
            # is written for a reader, so the model gets it as is.
            log.info("tool %s failed: %s", name, e)
            error = str(e)
        except Exception as e:  # a bug in a tool: keep the turn alive, log the traceback
            log.exception("tool %s crashed", name)
            error = f"The tool failed unexpectedly ({type(e).__name__}: {e})."
        return ToolCallRecord(
            name=name,
            arguments=shown_args,
            result=result,
            error=error,
            ms=(time.perf_counter() - t0) * 1000,
            empty=error is None and is_empty_result(result),
        )

    @staticmethod
    def _parse_arguments(spec: ToolSpec, arguments: Any) -> dict[str, Any]:
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as e:
                raise ToolArgumentsError(
                    f"Arguments of {spec.name} are not valid JSON ({e.msg}); "
                    "send a JSON object matching the tool's parameters."
                ) from None
        if not isinstance(arguments, dict):
            raise ToolArgumentsError(
                f"Arguments of {spec.name} must be a JSON object, got {type(arguments).__name__}."
            )
        try:
            model = spec.args_model.model_validate(arguments)
        except ValidationError as e:
            raise ToolArgumentsError(
                f"Invalid arguments for {spec.name}: {describe_validation(e)}."
            ) from None
        return {k: getattr(model, k) for k in spec.args_model.model_fields}
