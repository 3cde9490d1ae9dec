"""Whose a tool is, by the clause's subject: what a team, a product or a system of the user's
runs is the project's; what the user knows, learns or uses themself is their skill."""

from __future__ import annotations

import pytest

from tests.extraction.session import extract


def _types(text: str, word: str) -> list[str]:
    return [m.type for m in extract(text) if word in m.content]


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("We use Buildkite for CI.", "Buildkite"),
        ("Our backend is Rails + Sidekiq.", "Sidekiq"),
        ("We use Buildkite for CI, and deploy to Fly.io", "Fly.io"),
        ("Tests run with Mocha.", "Mocha"),
        ("我们组用 Jenkins 跑 CI", "Jenkins"),
        ("我们 backend 全是 Rust 和 Axum", "Axum"),
        ("服务都部署在阿里云上", "阿里云"),
    ],
)
def test_a_teams_or_a_systems_tool_is_the_projects(text: str, word: str) -> None:
    assert _types(text, word) == ["project"]


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("I use Buildkite for my side projects.", "Buildkite"),
        ("I know Go.", "Go"),
        ("For anything infra-related I reach for Terraform.", "Terraform"),
        ("我会用 Jenkins", "Jenkins"),
        ("我平时主要用 Unity 和 C#", "Unity"),
        ("我在学 Rust", "Rust"),
    ],
)
def test_the_users_own_tool_stays_their_skill(text: str, word: str) -> None:
    assert _types(text, word) == ["skill"]


def test_a_choice_made_stays_a_decision() -> None:
    assert _types("We went with gRPC.", "gRPC") == ["decision"]


def test_a_teams_tool_said_again_later_keeps_the_projects_type() -> None:
    said = extract(
        "Tests use unittest.", "I rewrote the tests in pytest last week, unittest is out."
    )
    assert [m.type for m in said if "unittest" in m.content][:1] == ["project"]
    said = extract("我们的服务部署在阿里云。", "服务已经全部迁到腾讯云了。")
    assert [m.type for m in said if "腾讯云" in m.content] == ["project"]


@pytest.mark.parametrize(
    "text",
    [
        "我是 full-stack，前端 Vue 后端 Node",
        "I'm full-stack, the frontend is Vue and the backend is Node.",
    ],
)
def test_a_system_beside_the_users_own_part_in_it_is_theirs(text: str) -> None:
    assert _types(text, "Vue") == ["skill"]
    assert _types("The frontend is Vue and the backend is Node.", "Vue") == ["project"]
