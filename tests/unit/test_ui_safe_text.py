"""Text from a model, a memory or a URL as markdown: images become links, names stay text."""

from __future__ import annotations

from ui.format import ImageFreeStream, md_text, no_images, plain_text


def test_images_become_links_whatever_their_form():
    text = "a ![x](http://h/l?q=1) b !![y][ref] c \\![z](u)\n\n[ref]: http://h/r"
    assert "![" not in no_images(text)
    assert "[x](http://h/l?q=1)" in no_images(text)


def test_a_streamed_reply_never_shows_an_image_split_across_pieces():
    stream = ImageFreeStream()
    pieces = ["Look !", "!", "[x](http://h/leak) wow", "!"]
    out = "".join(stream.feed(p) for p in pieces) + stream.flush()
    assert out == "Look [x](http://h/leak) wow!"


def test_a_name_is_literal_markdown():
    shown = md_text("**b** [l](http://h) :red[x]\nnext")
    assert "\n" not in shown
    assert "\\*\\*b\\*\\*" in shown and "\\[l\\]" in shown and "\\:red" in shown


def test_a_table_cell_shows_the_words_markdown_shows_not_its_markup():
    reply = (
        "I saved your message.\n\nWhat I remember about this:\n**Health**\n"
        "- Running plan after the sprain\n> \\- Some stiffness is common (walk\\)\n"
        "# Big [click](http://example.com) ![pic](http://h/i) :red[warn] `code` ~~old~~ _so_"
    )
    assert plain_text(reply) == (
        "I saved your message.\nWhat I remember about this:\nHealth\n"
        "Running plan after the sprain\n- Some stiffness is common (walk)\n"
        "Big click pic warn code old so"
    )
    # what is not markup stays: snake_case, arithmetic, an escaped star, a bare URL
    # a link's address may hold parentheses; HTML is no markup a grid draws: it stays text
    assert plain_text("[call](javascript:alert(1)) <b>x</b>") == "call <b>x</b>"
    kept = "snake_case 2 * 3 \\*not bold\\* http://h/a_b"
    assert plain_text(kept) == "snake_case 2 * 3 *not bold* http://h/a_b"


def test_every_table_of_memories_and_messages_shows_plain_text():
    from types import SimpleNamespace

    from ui.tables import episodic_frame, messages_frame, procedural_frame, semantic_frame

    md = "**Health** [plan](http://h)"
    rows = [{"id": "a", "text": md}, {"id": "b", "text": "new", "superseded_by": "a"}]
    assert list(episodic_frame(rows)["Memory"]) == ["Health plan", "new"]
    assert episodic_frame(rows)["Replaced by"][1] == "“Health plan”"
    assert semantic_frame([{"id": "a", "text": md}])["Fact"][0] == "Health plan"
    assert (
        procedural_frame([{"id": "a", "query_pattern": md}])["Question pattern"][0] == "Health plan"
    )
    said = SimpleNamespace(role="assistant", content="> \\- Some **stiffness**", timestamp=0)
    assert messages_frame([said])["Message"][0] == "- Some stiffness"


def test_a_memory_only_answer_never_shows_its_offline_notice_as_news():
    from agent.prompt import MEMORY_ONLY_MARK
    from agent.replies import without_offline_notice
    from ui.answers import OFFLINE_THEN

    stored = (
        f"The language model is offline, {MEMORY_ONLY_MARK}\n"
        "Ollama is not reachable at http://127.0.0.1:11434: start it with `ollama serve`.\n"
        "\nI saved your message."
    )
    # offline now: the banner says so, the answer does not repeat it
    assert without_offline_notice(stored) == "I saved your message."
    # the model is back: the answer says it was offline then, not what to run now
    back = without_offline_notice(stored, OFFLINE_THEN)
    assert back.startswith(OFFLINE_THEN) and "not reachable" not in back
    assert back.endswith("I saved your message.")
    # a server that failed keeps its notice: that is news
    failed = f"The model server failed (HTTP 500), {MEMORY_ONLY_MARK}\nIt said: boom"
    assert without_offline_notice(failed, OFFLINE_THEN) == failed
