"""The import rules of the architecture, checked on the source (like httpx tests its API).

- layers point one way: app/pages -> ui -> agent -> memory (no back edges);
- no import cycle among the project's modules (TYPE_CHECKING imports count: a cycle that
  only type checkers see still couples the modules);
- the product (`memory`, `agent`, `ui`, `pages`, `app`) never imports the research in `lab`
  nor the benchmarks beside it (`benchmarks`);
- `memory` never imports streamlit; `ollama` is imported only by the LLM client and the
  Ollama embedder; callers use the packages' curated public names;
- the product within its line budget, counted over what the app and the CLIs import;
- only the write policy (`memory.writing`) adds memories; bulk paths are named.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memory", "agent", "ui")
LAYER = {"memory": 0, "agent": 1, "ui": 2, "pages": 3, "app": 3}
#: Lines of product code: every line of each module the app (app.py, pages/) and the CLIs
#: (`python -m memory`, `python -m agent`) import, directly or through others, wherever the
#: import stands (in a function, under TYPE_CHECKING); tests, the lab and the benchmarks are not
#: among them. The project aims at 26,000; until then growth is a decision made in review: a
#: change that adds code raises this number in the same commit and says why, one that removes
#: lowers it.
PRODUCT_LINES = 28_536
ENTRY_POINTS = ("app", "memory.__main__", "agent.__main__")


def _modules() -> dict[str, Path]:
    out = {"app": ROOT / "app.py"}
    for pkg in (*PACKAGES, "pages"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _at_import(tree: ast.Module) -> list[ast.stmt]:
    """The statements that run when the module is imported, nested ones included (not
    functions' bodies, not `if TYPE_CHECKING:`)."""
    out: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append(node)
            todo += [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return out


def _imports(name: str, path: Path, at_import: bool = False) -> set[str]:
    """Project modules imported by a module (`from pkg import sub` counts `pkg.sub`);
    `at_import`: only those its import runs (`_at_import`)."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    for node in _at_import(tree) if at_import else ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            # Importing `a.b.c` runs `a/__init__` and `a/b/__init__` first: real edges too,
            # except to the importing module's own packages (their re-exports import it).
            while t and t != name and not name.startswith(t + "."):
                if t in MODULES:
                    found.add(t)
                t = t.rpartition(".")[0]
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _top(module: str) -> str:
    return module.split(".")[0]


def test_layers_point_one_way() -> None:
    back = [(m, d) for m, deps in GRAPH.items() for d in deps if LAYER[_top(d)] > LAYER[_top(m)]]
    assert back == []


def test_no_import_cycles() -> None:
    # Package __init__ modules re-export their submodules; an edge from a submodule to its own
    # package's __init__ would be a cycle by construction, so a module importing its own
    # package is reported as such.
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(GRAPH[m]):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)
    assert cycles == []


def _third_party(path: Path, at_import: bool = False) -> set[str]:
    out: set[str] = set()
    tree = ast.parse(path.read_text())
    for node in _at_import(tree) if at_import else ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


def product_modules() -> set[str]:
    """The modules the entry points import, directly or through others (importing `a.b`
    runs `a/__init__` too: `GRAPH` holds those edges)."""
    seen: set[str] = set()
    todo = [*ENTRY_POINTS, *(m for m in MODULES if _top(m) == "pages")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += GRAPH[module]
    return seen


def product_lines() -> int:
    return sum(len(MODULES[m].read_text().splitlines()) for m in product_modules())


def test_the_product_stays_within_its_line_budget() -> None:
    lines = product_lines()
    assert lines <= PRODUCT_LINES, (
        f"product code is {lines} lines, over its budget of {PRODUCT_LINES}: take out by design "
        "what the change no longer needs, or raise PRODUCT_LINES in this change and say why"
    )


@pytest.mark.parametrize("beside", ["lab", "benchmarks"])
def test_the_product_never_imports_what_lies_beside_it(beside: str) -> None:
    """lab/ holds research that was not adopted, benchmarks/ the measurements: the product
    runs (and ships) without them."""
    users = [m for m in MODULES if beside in _third_party(MODULES[m])]
    assert users == []


def test_the_chats_first_page_imports_no_tables_charts_or_embedding_runtime() -> None:
    """What app.py's import runs leaves pandas, plotly and ONNX Runtime out (seconds of a cold
    open on a busy machine): the tables, the Stats page's charts and the first embedding
    import them when they need them (the model opens after the first page: `ui.resources`)."""
    seen: set[str] = set()
    todo = ["app"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += _imports(module, MODULES[module], at_import=True)
    heavy = {"pandas", "plotly", "onnxruntime"}
    found = {m: heavy & _third_party(MODULES[m], at_import=True) for m in sorted(seen)}
    assert {m: names for m, names in found.items() if names} == {}


def test_memory_never_imports_streamlit() -> None:
    users = [m for m in MODULES if _top(m) == "memory" and "streamlit" in _third_party(MODULES[m])]
    assert users == []


def test_only_the_llm_client_and_the_ollama_embedder_import_ollama() -> None:
    users = {m for m in MODULES if "ollama" in _third_party(MODULES[m])}
    assert users == {"agent.llm", "memory.embeddings.ollama_embedder"}


def test_outside_memory_uses_its_public_names() -> None:
    """ui/, pages and app reach the memory package only through `memory` (its `__all__`)
    and the light `memory.service`/`memory.models`/`memory.errors`/`memory.config` modules
    (and `memory.words`, the names in people's words)."""
    allowed = {
        "memory",
        "memory.service",
        "memory.models",
        "memory.errors",
        "memory.config",
        "memory.writing",
        "memory.words",
    }
    reaching_in = [
        (m, d)
        for m, deps in GRAPH.items()
        if _top(m) in ("ui", "pages", "app")
        for d in deps
        if _top(d) == "memory" and d not in allowed
    ]
    assert reaching_in == []


@pytest.mark.parametrize("package", ["memory", "memory.stores", "memory.recall", "memory.runtime"])
def test_public_names_exist(package: str) -> None:
    mod = importlib.import_module(package)
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert mod.__all__ and missing == []


def test_the_memory_package_exports_only_what_the_product_takes_from_it() -> None:
    """`memory.__all__` is the names the agent, the UI and the pages import from `memory`
    itself (an export no one takes is a second spelling of a submodule's name)."""
    taken = {
        alias.name
        for name, path in MODULES.items()
        if _top(name) != "memory"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "memory" and node.level == 0
        for alias in node.names
    }
    import memory

    assert set(memory.__all__) <= taken


#: The stores' raw writes. A new memory goes through `memory.writing.policy` (validation,
#: dedup, supersession); the coordinator implements them and maintenance rewrites memories it
#: already holds (merges, with their own history).
RAW_WRITES = {"add_episodic", "add_semantic", "supersede"}
RAW_WRITERS = {"memory.writing.policy", "memory.coordinator"}
#: The documented bulk path: records kept as they are (an import, the demo persona's dated
#: logs and summaries; outside the product, a benchmark's ingest).
BULK_WRITES = {"add_episodic_many"}
BULK_WRITERS = {"memory.coordinator", "memory.admin.transfer", "memory.demo.loader"}


def _calls(path: Path, names: set[str]) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
    ]


def test_only_the_write_policy_calls_the_raw_writes() -> None:
    outside = {
        m: lines
        for m, path in MODULES.items()
        if m not in RAW_WRITERS
        and not m.startswith("memory.maintenance")
        and (lines := _calls(path, RAW_WRITES))
    }
    assert outside == {}
    bulk = {
        m: lines
        for m, p in MODULES.items()
        if m not in BULK_WRITERS and (lines := _calls(p, BULK_WRITES))
    }
    assert bulk == {}


def test_each_layer_owns_its_settings() -> None:
    """memory's Settings hold the memory's (no chat model, no sign-in) and import nothing from
    recall; the agent's and the app's live with them, composed at the edges."""
    from agent.config import AgentSettings
    from memory.config import Settings
    from ui.config import AppSettings

    memory_fields = set(Settings.model_fields)
    assert not memory_fields & {"ollama_model", "ollama_timeout_s"}
    assert not {f for f in memory_fields if f.startswith("auth") or "unauthenticated" in f}
    assert {"ollama_model", "ollama_timeout_s", "num_ctx"} <= set(AgentSettings.model_fields)
    assert {"auth_mode", "auth_admins"} <= set(AppSettings.model_fields)
    assert GRAPH["memory.config"] <= {"memory.defaults"}


def test_env_example_lists_every_setting_of_every_layer() -> None:
    from agent.config import AgentSettings
    from memory.config import Settings
    from ui.config import AppSettings

    text = (ROOT / ".env.example").read_text()
    names = {n.upper() for n in Settings.model_fields} | {
        n.upper() for n in AppSettings.model_fields
    }
    names |= {
        n.upper() if n.startswith("ollama") else f"AGENT_{n.upper()}"
        for n in AgentSettings.model_fields
    }
    missing = sorted(n for n in names if f"{n}=" not in text)
    assert missing == []
