"""Fixtures of the survey tests: direct access to a live server's database for seeding, and the
browser fixtures of the widget tests (``tests/surveys/browser.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sightline.database import Database, open_database
from tests.support.server import LiveServer
from tests.surveys.browser import browser, context, owner_client, page, shop, site

__all__ = ["browser", "context", "owner_client", "page", "shop", "site"]


def database_of(server: LiveServer) -> Database:
    url = server.database_url or f"sqlite:///{server.data_dir / 'sightline.db'}"
    return open_database(url, migrate=False)


@pytest.fixture(scope="module")
def server_db(console_server: LiveServer) -> Iterator[Database]:
    """The database ``console_server`` uses, for seeding many responses quickly."""
    database = database_of(console_server)
    yield database
    database.dispose()
