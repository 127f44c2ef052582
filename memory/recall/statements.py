"""Does a memory state what the user prefers or must avoid? A tiny classifier on its vector.

The product's main use is a preference told once ("I strictly follow a Kosher diet") that
matters weeks later to a request in other words ("top dining spots in Chicago?"). Meaning
alone ranks other turns on the same subject above it: the user's requests and plans about
the same things ("I'm always looking for good places to eat on trips"). What sets the
evidence apart is the KIND of text: a standing preference, dislike or constraint of the
user. Recall adds that as one input of its model (`scoring.W_STATED`), and only when the
message asks for advice or recommendations, or about the user's own tastes
(`request_kind`): a question about what happened ("when did Caroline go to the support
group?") does not want preferences first.

The classifier is a logistic regression on the embedding, fitted in the background when the
app starts, on the example sentences below (written for this module, not taken from any
benchmark), so it works for whichever embedding model the store uses. No data set was used to
fit it; its single weight in the recall model was fitted like the others (its effect:
BENCHMARKS.md, Decisions).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Literal, Protocol

import numpy as np


class Embedder(Protocol):
    """What the classifier needs of an embedder (memory.embeddings' own Protocol imports the
    settings, which import recall: a local one keeps the layers acyclic)."""

    @property
    def model_id(self) -> str: ...

    def embed_many(self, texts: list[str]) -> np.ndarray: ...


#: Standing preferences, dislikes and constraints, in many domains and phrasings (first person
#: as people say them, third person as the extractor stores them).
PREFERENCE_EXAMPLES = (
    "I never eat meat.",
    "I'm allergic to peanuts.",
    "I prefer tea over coffee.",
    "I can't stand loud music.",
    "I only buy second-hand furniture.",
    "I hate waking up early.",
    "I don't drink alcohol.",
    "I would rather take the train than fly.",
    "My favourite colour is green.",
    "I'm not a fan of spicy food.",
    "I avoid anything with added sugar.",
    "I get seasick, so boats are out for me.",
    "I don't use apps that track my location.",
    "I like my answers short and to the point.",
    "I have no interest in celebrity news.",
    "I'm scared of deep water.",
    "I always choose aisle seats.",
    "Horror films make me uncomfortable.",
    "I love hiking in the mountains.",
    "I keep my spending on gadgets low.",
    "I stick to a low-sodium diet for my blood pressure.",
    "I'm not comfortable with crowds.",
    "I find jazz boring.",
    "I work best in the early morning.",
    "I dislike wearing wool.",
    "Noise really bothers me when I sleep.",
    "I won't buy anything tested on animals.",
    "Reading on screens gives me headaches, I prefer paper books.",
    "I'm lactose intolerant.",
    "Strategy games are my thing; shooters aren't.",
    "I'm a night owl and hate morning meetings.",
    "No dairy for me, it upsets my stomach.",
    "I choose hotels that are quiet and small.",
    "I can't handle heights.",
    "I'm not into romantic comedies.",
    "I try to avoid plastic packaging whenever I can.",
    "Open-plan offices drive me mad.",
    "I'd never buy a used car.",
    "I'm a big fan of classical music.",
    "Please always give me metric units.",
    "I don't like talking on the phone; text me instead.",
    "I keep kosher.",
    "Long flights are hard for me because of my back.",
    "I go for comfort over style when I buy shoes.",
    "Anything too sweet puts me off.",
    # as the extractor writes memories: about the user, in the third person
    "User prefers window seats.",
    "The user is vegan.",
    "Dislikes spicy food.",
    "User avoids driving at night.",
    "The user only reads non-fiction.",
    "Allergic to penicillin.",
    "User wants answers without jargon.",
    "Prefers to exercise in the evening.",
)

#: Everything else people say to an assistant: questions, requests, plans, events, small talk.
OTHER_EXAMPLES = (
    "What's the weather like tomorrow?",
    "Can you recommend a good book?",
    "Thanks, that helps!",
    "Hi there!",
    "I went to the dentist yesterday.",
    "My brother is visiting next week.",
    "How do I reset my password?",
    "I need to plan a trip to Spain.",
    "Could you summarise this article for me?",
    "I'm thinking about buying a new laptop.",
    "We had pizza for dinner.",
    "Any tips for a job interview?",
    "I finished reading a novel last night.",
    "I want to learn something new this year.",
    "What time is it in Tokyo?",
    "I'm looking for a gift for my mum.",
    "Okay, sounds good.",
    "My car broke down this morning.",
    "I'll be travelling for work next month.",
    "Tell me a fun fact.",
    "I started a new job on Monday.",
    "Can you help me write an email?",
    "I've been busy with the kids.",
    "Where should we go for the weekend?",
    "I got a new phone.",
    "That's interesting, tell me more.",
    "My sister just moved to a new flat.",
    "How many grams are in a cup of flour?",
    "I have a meeting with my manager at three.",
    "Let's talk about something else.",
    "Can you find me a flight to Rome?",
    "We're going camping this weekend.",
    "Which museums are open on Sundays?",
    "I just got back from the gym.",
    "What's a good present for a ten-year-old?",
    "I'm hosting a dinner party on Saturday.",
    "My laptop keeps freezing, any idea why?",
    "How long does it take to boil an egg?",
    "Our team won the match yesterday.",
    "Please translate this sentence into French.",
    "I'm going to visit my grandparents.",
    "Remind me what we talked about last time.",
    "The kids start school next week.",
    "Can you suggest a name for my new podcast?",
    "I've been reading about the history of Rome.",
    "User went to the dentist on Tuesday.",
    "The user asked how to reset a router.",
    "Moved to a new flat in March.",
    "User's daughter started school.",
    "The user ran 5 km this morning.",
    "Asked for a summary of an article.",
    "User had a meeting with their manager.",
    "The user is travelling to Berlin next week.",
)

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
#: TASTES: questions about the user's own tastes ("when do I like to exercise?"), which ask for
#: one thing the user said.
_ASKS_TASTES = re.compile(
    r"\b((do|did|would) i (usually |normally |really )?"
    r"(like|prefer|enjoy|love|hate|dislike|want|avoid|eat|drink)"
    r"|am i (allergic|intolerant|sensitive)"
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
    above (106 sentences, one batch embedding, a few milliseconds of Newton steps).

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
