"""Fixtures of the autocapture tests: the reserved events go through ingest, so they use ingest's
server (shared with ingest's modules, ``tests.support.sharing``), sites and visitors."""

from __future__ import annotations

from tests.ingest.conftest import ingest_db, ingest_owner, ingest_server, site, visitor

__all__ = ["ingest_db", "ingest_owner", "ingest_server", "site", "visitor"]
