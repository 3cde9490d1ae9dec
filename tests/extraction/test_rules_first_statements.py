"""First statements in shapes the rules did not read: where the user works out of or is for the
foreseeable future, a pet named after the others one has, a project named before what it is.
Without them a later change has no old value to replace.

The messages are not from any extraction set.
"""

from __future__ import annotations

from tests.extraction.session import extract, said_under


def test_where_the_user_works_out_of_after_saying_who_they_are() -> None:
    said = said_under("city", "Hi, I'm Ana, a nurse at St Mary's, working out of Bristol.")
    assert said == [("t0", "personal", "User lives in Bristol")]
    assert said_under("city", "I'm a designer at Figma, working from Monday to Thursday.") == []


def test_in_a_place_for_the_foreseeable_future() -> None:
    said = said_under("city", "I'm in Porto for the foreseeable future, so plan around that.")
    assert said == [("t0", "personal", "User lives in Porto")]


def test_a_pet_named_after_the_others_one_has() -> None:
    said = said_under("pet", "We've got three kids and a beagle called Waffles.")
    assert said == [("t0", "personal", "User has a pet: beagle called Waffles")]
    assert said_under("pet", "I've got meetings all day and a dentist appointment.") == []


def test_a_project_named_before_what_it_is() -> None:
    said = extract("I'm building Quill, a small markdown editor in Rust.")
    assert ("project", "User is working on a project called Quill") in [
        (m.type, m.content) for m in said
    ]
