"""The 'stated preference' part of recall: when it applies and what it does to a score."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from memory.models import MemoryType
from memory.recall.hybrid import RecallWeights, fuse
from memory.recall.statements import (
    StatementModel,
    fit_logistic,
    request_kind,
)
from memory.stores.records import vector_bytes

NOW = 1_700_000_000_000


@pytest.mark.parametrize(
    "text",
    [
        "Can you recommend a hotel in Dubai?",
        "What do I usually like for breakfast?",
        "What foods am I allergic to?",
        "What are some good podcasts for my commute?",
        "Any tips for my first marathon?",
        "When do I like to exercise?",
        "What should I cook tonight? Ideas welcome",
    ],
)
def test_requests_for_advice_want_preferences(text: str) -> None:
    assert request_kind(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "When did Caroline go to the LGBTQ support group?",
        "What did Melanie paint last year?",
        "How many kids does Jon have?",
        "What did Caroline plan for the summer?",
        "Who made the cake for the party?",
        "Did Jon write a book?",
        # what the assistant said before: an earlier answer, not advice now
        "What did you suggest to keep fit while my ankle healed?",
        "Which book did you recommend last week?",
        "You recommended a stretch for my calves, what was it?",
        "you\u2019ve suggested swimming, what else was it?",
        "Didn't you say I should rest?",
        "What was your suggestion for my ankle?",
        "Remind me of your advice about my ankle",
    ],
)
def test_questions_about_what_happened_do_not(text: str) -> None:
    assert request_kind(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "You recommended pasta last time; what should I eat the night before my long run?",
        "Did you get my last message? Can you recommend a good recovery plan for me?",
        "You suggested swimming; can you suggest a good weekly plan for me now?",
        "Did you know any good vegetarian recipes for me?",
        "Which shoes should I buy? You told me my budget matters",
        "Plan my week like you said yesterday",
    ],
)
def test_a_request_that_also_mentions_an_earlier_answer_is_still_a_request(text: str) -> None:
    """The words about what was said are taken out; what is left still asks for advice."""
    assert request_kind(text) == "advice"


@pytest.mark.parametrize(
    "text",
    [
        "plan my running",
        "Can you draft my weekly schedule",
        "Please put together a meal plan for next week",
        "Could you please organise my evenings?",
        "Help me prepare for the exam",
        "hey, make me a packing list",
        "Can you recommend a hotel in Dubai?",
    ],
)
def test_requests_for_a_plan_or_advice_are_advice(text: str) -> None:
    assert request_kind(text) == "advice"


@pytest.mark.parametrize(
    "text",
    [
        "When do I like to exercise?",
        "What foods am I allergic to?",
        "my favourite film?",
        "what can't I eat",  # a constraint of the user: their allergy or diet answers it
        "Can I drink coffee?",
        "Is there anything I shouldn't eat?",
    ],
)
def test_questions_about_one_taste_are_tastes(text: str) -> None:
    # one thing the user said: the user's own facts keep competing with each other there
    assert request_kind(text) == "tastes"


def test_fit_logistic_separates_what_it_can() -> None:
    x = np.array([[0.0], [0.2], [0.8], [1.0]])
    w = fit_logistic(x, np.array([0.0, 0.0, 1.0, 1.0]), l2=1e-2)
    p = 1 / (1 + np.exp(-(x[:, 0] * w[0] + w[1])))
    assert list(p > 0.5) == [False, False, True, True]


class _AxisEmbedder:
    """Preference examples point one way, the others the other way."""

    model_id = "axis-test"

    def embed_many(self, texts: list[str]) -> np.ndarray:
        from memory.recall.statements import PREFERENCE_EXAMPLES

        return np.array([[1.0, 0.0] if t in PREFERENCE_EXAMPLES else [0.0, 1.0] for t in texts])


def test_the_statement_model_scores_vectors_by_the_examples() -> None:
    model = StatementModel(_AxisEmbedder())
    assert model.probabilities(np.array([[1.0, 0.0]])) is None  # the answer path never fits
    model.prepare()
    p = model.probabilities(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert p is not None and p[0] > 0.5 > p[1]


def test_a_failing_fit_is_claimed_again_only_after_the_retry_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = StatementModel(_DownEmbedder())
    clock = [100.0]
    monkeypatch.setattr("memory.recall.statements.time.monotonic", lambda: clock[0])
    assert model.claim_fit() and not model.claim_fit()  # one caller schedules the fit
    with pytest.raises(ConnectionError):
        model.prepare()
    clock[0] += StatementModel.RETRY_S - 1
    assert not model.claim_fit()
    clock[0] += 2
    assert model.claim_fit()
    model.use(_AxisEmbedder())  # the embedder is back (a new coordinator)
    model.prepare()
    assert model.ready and not model.claim_fit()


def _row(mid: str, stated: float | None = None) -> dict:
    row = {
        "id": f"ns:episodic:{mid}",
        "vector_distance": "0.5",
        "timestamp": str(NOW),
        "importance": "0.5",
    }
    if stated is not None:
        row["_stated"] = stated
    return row


def test_a_stated_preference_outscores_an_equal_match_and_shows_its_part() -> None:
    w = RecallWeights(recency=0.0, importance=0.0, min_score=0.0)
    q = np.array([1.0, 0.0], dtype=np.float32)
    hits = fuse(MemoryType.EPISODIC, [_row("plan", 0.1), _row("pref", 0.9)], [], q, 5, w, NOW)
    assert [h.id for h in hits] == ["pref", "plan"]
    assert hits[0].parts.stated == 0.9 and hits[1].parts.stated == 0.1
    # unmarked rows (a query that wants no preferences) carry a zero part
    plain = fuse(MemoryType.EPISODIC, [_row("a")], [], q, 5, w, NOW)
    assert plain[0].parts.stated == 0.0


class _DownEmbedder:
    model_id = "down-test"

    def embed_many(self, texts: list[str]) -> np.ndarray:
        raise ConnectionError("embedding server down")


def test_recall_goes_on_without_the_part_until_the_classifier_is_fitted() -> None:
    from memory.recall.hybrid import HybridRequest, _mark_stated

    q = np.array([1.0, 0.0], dtype=np.float32)
    req = HybridRequest(
        MemoryType.EPISODIC,
        index=None,  # type: ignore[arg-type]  # not queried here
        vector_query=None,  # type: ignore[arg-type]
        text_query=None,
        k=5,
        query_vec=q,
        statements=StatementModel(_DownEmbedder()),
    )
    rows = [{**_row("a"), "embedding": vector_bytes(q)}]
    with pytest.raises(ConnectionError):
        req.statements.prepare()
    _mark_stated(req, rows)
    assert "_stated" not in rows[0]
    # and with a model that works, the same row is marked
    req.statements = StatementModel(_AxisEmbedder())
    req.statements.prepare()
    _mark_stated(req, rows)
    assert 0.0 < rows[0]["_stated"] < 1.0


@pytest.fixture
def clean_models() -> Iterator[None]:
    from memory.recall import statements

    before = dict(statements._MODELS)
    yield
    statements._MODELS.clear()
    statements._MODELS.update(before)


@pytest.mark.usefixtures("clean_models")
def test_one_model_per_embedding_model_fitted_with_a_working_embedder() -> None:
    from memory.recall.statements import statement_model_for

    class Down(_DownEmbedder):
        model_id = "shared-id-test"

    class Up(_AxisEmbedder):
        model_id = "shared-id-test"

    first = statement_model_for(Down())
    with pytest.raises(ConnectionError):
        first.prepare()
    second = statement_model_for(Up())  # a new coordinator, a working embedder
    assert second is first
    second.prepare()
    p = second.probabilities(np.array([[1.0, 0.0]]))
    assert p is not None and p[0] > 0.5
