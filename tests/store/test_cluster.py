"""The cluster layout (``schema.cluster_layout``) as far as one ClickHouse without Keeper or a
cluster can take it: every statement parses in ClickHouse, the tables it creates on each node are
created (without their replication and ``ON CLUSTER``), and docs/scaling.md shows exactly these
statements."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sightline.store import schema, upgrade
from sightline.store.engines import ClickHouse

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"
MARK = '<!-- generated from sightline.store.schema.cluster_layout("analytics");'
UPGRADE_MARK = '<!-- generated from sightline.store.upgrade.cluster_steps("analytics");'


@pytest.fixture
def store(clickhouse: Any) -> Iterator[ClickHouse]:
    engine = ClickHouse(clickhouse.url(f"t_{uuid.uuid4().hex[:12]}"))
    yield engine
    engine.close()


def test_the_cluster_layout_in_the_docs_is_the_one_the_code_generates() -> None:
    text = DOCS.read_text()
    shown = text[text.index(MARK) :].split("```sql\n", 1)[1].split("```", 1)[0]
    assert shown == ";\n\n".join(schema.cluster_layout("analytics")) + ";\n"


def test_the_cluster_upgrade_in_the_docs_is_the_one_the_code_generates() -> None:
    text = DOCS.read_text()
    shown = text[text.index(UPGRADE_MARK) :].split("```sql\n", 1)[1].split("```", 1)[0]
    assert shown == ";\n\n".join(upgrade.cluster_steps("analytics")) + ";\n"


def test_every_cluster_statement_parses_in_clickhouse(store: ClickHouse) -> None:
    for statement in (*schema.cluster_layout("analytics"), *schema.clickhouse("analytics")):
        formatted = store.query("SELECT formatQuery({q:String})", {"q": statement})[0][0]
        assert "ON CLUSTER analytics" in formatted
    for statement in upgrade.cluster_steps("analytics"):
        formatted = store.query("SELECT formatQuery({q:String})", {"q": statement})[0][0]
        assert "ON CLUSTER analytics" in formatted or formatted.startswith(
            "INSERT INTO sightline.store_state"
        )


def test_a_cluster_of_the_previous_layout_is_left_to_its_operator_and_named() -> None:
    ran: list[str] = []
    with pytest.raises(upgrade.ClusterLayoutError, match=r"docs/scaling\.md"):
        upgrade.upgrade_clickhouse(lambda _what, sql: ran.append(sql), 0, missing=True, distributed=True)
    assert upgrade.upgrade_clickhouse(lambda _what, sql: ran.append(sql), 0, missing=False, distributed=True)
    assert ran == [], "Sightline never alters a cluster's tables itself"


def test_each_nodes_tables_of_the_layout_are_created_without_their_replication(store: ClickHouse) -> None:
    database = store.query("SELECT currentDatabase()", {})[0][0]
    made = []
    for statement in schema.cluster_layout("analytics"):
        if "Distributed(" in statement or statement.startswith("CREATE DATABASE"):
            continue
        local = statement.replace(" ON CLUSTER analytics", "").replace("sightline.", f"{database}.x_")
        local = re.sub(r"Replicated(\w+)\('[^']*', '\{replica\}'(?:, )?", r"\1(", local)
        store.execute(local)
        made.append(local.split()[5])
    assert made == [
        f"{database}.x_{t}" for t in ("store_state", "events_local", "visits_local", "visit_counts")
    ]
    for name in made:
        columns = store.query(
            f"SELECT count() FROM system.columns WHERE database || '.' || table = '{name}'", {}
        )
        assert columns[0][0] > 1
