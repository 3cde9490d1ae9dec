"""A standing request about the assistant's answers or the user's code conventions, read without a
word that says it lasts: naming, comments, markup, and the length of answers in general are
conventions that last by nature ("Please keep code comments to a minimum", "变量命名请用驼峰",
"回答尽量简短", "Replies in plain text please"). A request about one thing ("this function",
这段), a question and someone else's words give nothing.

The messages are made up for these tests, not taken from any extraction set.
"""

from __future__ import annotations

import pytest

from tests.extraction.session import extract


@pytest.mark.parametrize(
    ("text", "key", "word"),
    [
        ("Please keep code comments to a minimum.", "style:comments", "comments"),
        ("Go easy on the comments in code, I read the names.", "style:comments", "comments"),
        ("代码注释尽量少写。", "style:comments", "注释"),
        ("注释请写详细一点。", "style:comments", "注释"),
        ("Use camelCase for variable names, please.", "style:naming", "camelCase"),
        ("Keep variable names in snake_case across the repo.", "style:naming", "snake_case"),
        ("变量命名请用驼峰。", "style:naming", "驼峰"),
        ("函数名统一用下划线。", "style:naming", "下划线"),
        ("Replies in plain text please.", "style:markup", "plain text"),
        ("No markdown headers in your answers.", "style:markup", "markdown"),
        ("回答里的代码块请都标上语言。", "style:markup", "代码块"),
        ("回复不要用 Markdown。", "style:markup", "Markdown"),
        ("回答尽量简短。", "style:length", "简短"),
        ("回答请控制在五行以内。", "style:length", "五行"),
        ("Short answers help me a lot.", "style:length", "short"),
        ("Keep answers brief, please.", "style:length", "brief"),
    ],
)
def test_a_convention_lasts_by_nature(text: str, key: str, word: str) -> None:
    said = [m for m in extract(text) if m.subject == key]
    assert said and said[0].type == "preference", extract(text)
    assert word.casefold() in said[0].content.casefold()


@pytest.mark.parametrize(
    "text",
    [
        "Please add comments to this function.",
        "Can you use camelCase here?",
        "把这段代码的注释删掉。",
        "这个变量命名用驼峰吗？",
        "Rewrite it in plain text.",
        "My manager wants no markdown headers.",
        "这段回答简短一点。",
    ],
)
def test_a_request_about_one_thing_is_no_convention(text: str) -> None:
    assert not [m for m in extract(text) if m.subject.startswith("style:")], extract(text)
