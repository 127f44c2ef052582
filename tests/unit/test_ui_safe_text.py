"""Text from a model, a memory or a URL as markdown: images become links, names stay text."""

from __future__ import annotations

from ui.format import ImageFreeStream, md_text, no_images


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
