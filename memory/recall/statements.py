"""Does a memory state what the user prefers or must avoid? A logistic regression on its
vector, fitted in the background at start on `memory/data/statement_examples.toml`, so it works
with any embedding model; recall uses it (`scoring.W_STATED`) only when the message asks for
advice, a plan or about the user's tastes (`request_kind`). Why: docs/recall.md."""

from __future__ import annotations

import re
import threading
import time
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memory.data_files import load_data_file


class Embedder(Protocol):
    """What the classifier needs of an embedder (memory.embeddings' own Protocol imports the
    settings, which import recall: a local one keeps the layers acyclic)."""

    @property
    def model_id(self) -> str: ...

    def embed_many(self, texts: list[str]) -> np.ndarray: ...


class _Examples(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    preference: tuple[str, ...] = Field(min_length=1)
    other: tuple[str, ...] = Field(min_length=1)


_EXAMPLES = load_data_file("statement_examples.toml", _Examples)
#: Standing preferences, dislikes and constraints (`memory/data/statement_examples.toml`).
PREFERENCE_EXAMPLES = _EXAMPLES.preference
#: Everything else people say to an assistant: questions, requests, plans, events, small talk.
OTHER_EXAMPLES = _EXAMPLES.other

#: Messages where what the user prefers counts, of two kinds. ADVICE: requests for advice,
#: recommendations, ideas or a plan, which need every goal and constraint of the user at once.
#: Deliberately broad words ("best", "good", "options", "for me") also catch some questions
#: about what happened ("the best part of the trip"): there the parts only nudge the user's own
#: statements, and on LoCoMo 3 % of the questions pass.
_ASKS_ADVICE = re.compile(
    r"\b(recommend\w*|suggest\w*|advi[cs]e\w*|tips?|ideas?|options?|help me|should i|for me"
    r"|what are some|best|good)\b",
    re.IGNORECASE,
)
#: ... and requests for a plan or something made for the user ("plan my running", "can you
#: draft my weekly schedule", "put together a meal plan"): the verb opens the request, so a
#: question about what someone planned ("What did Caroline plan?") does not count.
_ASKS_A_PLAN = re.compile(
    r"^\W*(?:(?:hi|hey|ok|okay|please)\W+)*"
    r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|help me\s+|i need you to\s+"
    r"|i(?:'d| would) like you to\s+|let'?s\s+)?"
    r"(?:plan|draft|schedule|organi[sz]e|prepare|put together|come up with|make|create|design"
    r"|build|write|set up|map out|work out)\b",
    re.IGNORECASE,
)
#: TASTES: questions about the user's own tastes or constraints ("when do I like to exercise?",
#: "what can't I eat?"), which ask for one thing the user said.
_ASKS_TASTES = re.compile(
    r"\b((do|did|would) i (usually |normally |really )?"
    r"(like|prefer|enjoy|love|hate|dislike|want|avoid|eat|drink)"
    r"|am i (allergic|intolerant|sensitive)"
    r"|(can['’]?t|cannot|can|could|may) i (eat|drink|have)"
    r"|i (can['’]?t|cannot|shouldn['’]?t|should not|mustn['’]?t|must not) (eat|drink|have)"
    r"|my (favou?rite|preferences?|tastes?))\b",
    re.IGNORECASE,
)

#: How a message refers to what the assistant said before: "did you <verb>", "you suggested",
#: "what was your advice", "remind me what you ...".
_WHAT_WAS_SAID = re.compile(
    r"\bdid(?:n't)? you \w+"
    r"|\byou(?:'ve|'d| had| have)? (?:said|told|suggested|recommended|advised|mentioned"
    r"|answered|proposed|gave|wrote|explained)\b"
    r"|\b(?:was|were) your (?:suggestions?|advice|recommendations?|tips?|ideas?|answers?|plans?)\b"
    r"|\bremind me (?:of |what )?(?:your|you)(?: (?:suggestions?|advice|recommendations?|tips?"
    r"|ideas?|answers?|plans?|said|told|suggested|recommended|advised))?\b",
    re.IGNORECASE,
)

RequestKind = Literal["advice", "tastes"]


def asks_what_was_said(text: str) -> bool:
    """Does the message ask what the assistant said before ("what did you suggest for my
    ankle?", "you recommended a stretch, what was it?"), and nothing more? A message that also
    asks for advice, a plan or about the user's tastes outside those words ("you recommended
    pasta last time; what should I eat tonight?") is that request."""
    text = text.replace("\u2019", "'")  # "you’ve", "didn’t"
    if not _WHAT_WAS_SAID.search(text):
        return False
    return _kind(_WHAT_WAS_SAID.sub(" ", text)) is None


def request_kind(text: str) -> RequestKind | None:
    """ "advice" for a request for advice, a recommendation or a plan; "tastes" for a question
    about the user's own tastes; None otherwise (what happened, general knowledge, what the
    assistant said before: "what did you suggest?" asks for an earlier answer, and the
    exchange that holds it must not rank below every stated fact)."""
    return None if asks_what_was_said(text) else _kind(text)


def _kind(text: str) -> RequestKind | None:
    if _ASKS_ADVICE.search(text) or _ASKS_A_PLAN.search(text):
        return "advice"
    if _ASKS_TASTES.search(text):
        return "tastes"
    return None


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> np.ndarray:
    """Weights `(w..., bias)` of P(y=1) = sigmoid(x @ w + bias), by Newton's method with a
    small L2 penalty (also used by lab/fit_recall.py)."""
    x1 = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(x1.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-x1 @ w))
        grad = x1.T @ (p - y) + l2 * w
        hess = (x1 * (p * (1 - p))[:, None]).T @ x1 + l2 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


class StatementModel:
    """P(a text states a preference or constraint) from its embedding, fitted on the examples
    (106 sentences, one batch embedding, a few milliseconds of Newton steps).

    The answer path never fits: `probabilities` gives None until a fit has succeeded, and
    recall then goes on without the part. Fitting runs on the recall pipeline's background
    worker, at start and again (at most once a minute, `claim_fit`) while it keeps failing,
    e.g. while the embedding server is down."""

    #: strong regularisation: ~100 examples in hundreds of dimensions must not be memorised
    L2 = 1.0
    #: seconds between two fitting attempts while they fail
    RETRY_S = 60.0

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._weights: np.ndarray | None = None
        self._fit_lock = threading.Lock()  # one fit at a time (it embeds: can be slow)
        self._claim_lock = threading.Lock()
        self._claimed_at: float | None = None

    @property
    def ready(self) -> bool:
        return self._weights is not None

    def claim_fit(self) -> bool:
        """True when the caller should schedule `prepare` now (not fitted, and no attempt was
        claimed in the last RETRY_S seconds); at most one caller per interval gets True."""
        if self._weights is not None:
            return False
        with self._claim_lock:
            now = time.monotonic()
            if self._claimed_at is not None and now - self._claimed_at < self.RETRY_S:
                return False
            self._claimed_at = now
            return True

    def prepare(self) -> None:
        """Fit now (blocking; raises what the embedder raises)."""
        with self._fit_lock:
            if self._weights is None:
                examples = [*PREFERENCE_EXAMPLES, *OTHER_EXAMPLES]
                x = np.asarray(self._embedder.embed_many(examples), dtype=np.float64)
                y = np.r_[np.ones(len(PREFERENCE_EXAMPLES)), np.zeros(len(OTHER_EXAMPLES))]
                self._weights = fit_logistic(x, y, self.L2)

    def use(self, embedder: Embedder) -> None:
        """Embed the examples with this embedder if the model is not fitted yet (an older
        coordinator's embedder may be closed)."""
        if self._weights is None:
            self._embedder = embedder

    def probabilities(self, vectors: np.ndarray) -> np.ndarray | None:
        """One probability per row of `vectors` (stored memory vectors); None until fitted."""
        w = self._weights
        if w is None:
            return None
        z = np.asarray(vectors, dtype=np.float64) @ w[:-1] + w[-1]
        return 1.0 / (1.0 + np.exp(-z))


_MODELS: dict[str, StatementModel] = {}
_MODELS_LOCK = threading.Lock()


def statement_model_for(embedder: Embedder) -> StatementModel:
    """One model per embedding model in this process (every coordinator shares the fit; the
    weights depend on the model, not on the embedder object)."""
    with _MODELS_LOCK:
        model = _MODELS.get(embedder.model_id)
        if model is None:
            model = _MODELS[embedder.model_id] = StatementModel(embedder)
    model.use(embedder)
    return model
