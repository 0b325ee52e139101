"""Uploads at the same moment, on SQLite and PostgreSQL: of two files whose days overlap, exactly
one is accepted however the two requests interleave, since the overlap check and the acceptance
are one atomic step."""

from __future__ import annotations

import threading
from datetime import timedelta

import httpx

from tests.conftest import signed_in
from tests.imports.helpers import csv_text, upload
from tests.imports.test_api import D1, console_server, new_site, owner
from tests.support.server import LiveServer

__all__ = ["console_server", "owner"]
ROUNDS = 25


def _daily(first_day_offset: int, marker: int) -> bytes:
    days = [D1 + timedelta(days=first_day_offset + n) for n in range(3)]
    return csv_text(
        ["date", "visitors", "visits", "pageviews"], [[d.isoformat(), marker, 1, 1] for d in days]
    ).encode()


def _race(clients: tuple[httpx.Client, httpx.Client], site_id: int, bodies: tuple[bytes, bytes]) -> list[int]:
    """Both uploads sent at the same moment, each by its own client; their status codes."""
    start = threading.Barrier(2)
    answers = [0, 0]

    def send(index: int) -> None:
        start.wait()
        answers[index] = upload(clients[index], site_id, f"days-{index}.csv", bodies[index]).status_code

    threads = [threading.Thread(target=send, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_two_overlapping_uploads_at_the_same_moment_accept_exactly_one(
    owner: httpx.Client, console_server: LiveServer
) -> None:
    other = signed_in(console_server)
    try:
        for round_ in range(ROUNDS):
            site_id = new_site(owner, f"Race {round_}")
            answers = _race((owner, other), site_id, (_daily(0, 1), _daily(1, 2)))  # two days shared
            assert sorted(answers) == [202, 409], f"round {round_}: {answers}"
            listed = owner.get(f"/api/sites/{site_id}/imports").json()["imports"]
            assert len(listed) == 1, listed
    finally:
        other.close()
