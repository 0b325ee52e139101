"""Autocapture through ingest: the site's captures in ``/i/config``, and the reserved events
(``outbound_link``, ``file_download``, ``404``, ``engagement``, ``web_vital``, ``heatmap_click``)
stored when their props follow the rules and refused, naming the prop, when not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sightline.database import Database
from tests.ingest.helpers import Visitor, batch, event, stored

GOOD: dict[str, dict[str, Any]] = {
    "outbound_link": {"url": "https://partner.example/docs"},
    "file_download": {"url": "http://localhost/files/report.pdf"},
    "404": {"path": "/missing"},
    "engagement": {"seconds": 42, "scroll": 75},
    "web_vital": {"name": "LCP", "value": 1234, "rating": "good"},
    "heatmap_click": {
        "selector": "html>body>main>button#buy",
        "x": 0.5,
        "y": 0.25,
        "viewport": "laptop",
        "clicks": 3,
        "rage": True,
        "dead": False,
    },
}


def test_config_lists_the_captures_the_owner_turned_on_and_the_download_extensions(visitor: Visitor) -> None:
    assert visitor.config().json()["capture"] == []
    visitor.site.change(
        autocapture={"outbound_links": True, "heatmaps": True, "file_download_extensions": ["pdf"]}
    )
    config = visitor.config().json()
    assert config["capture"] == ["outbound-links", "heatmaps"]
    assert config["file_download_extensions"] == ["pdf"]
    visitor.site.change(collection_enabled=False)
    assert visitor.config().json()["capture"] == []


def test_every_reserved_event_with_its_props_is_stored(visitor: Visitor, ingest_db: Database) -> None:
    sent = [event(name, props={**props, "extra": "kept"}) for name, props in GOOD.items()]
    response = visitor.send(batch(visitor.site, *sent))
    assert response.status_code == 202, response.text
    rows = stored(ingest_db, visitor.site)
    assert [(r.name, json.loads(r.props)) for r in rows] == [
        (name, {**props, "extra": "kept"}) for name, props in GOOD.items()
    ]


@pytest.mark.parametrize(
    ("name", "prop", "value"),
    [
        ("outbound_link", "url", "javascript:alert(1)"),
        ("outbound_link", "url", None),
        ("file_download", "url", 7),
        ("404", "path", "missing"),
        ("engagement", "seconds", -1),
        ("engagement", "seconds", 1.5),
        ("engagement", "seconds", 86_401),
        ("engagement", "scroll", 101),
        ("engagement", "scroll", True),
        ("web_vital", "name", "FID"),
        ("web_vital", "value", -3),
        ("web_vital", "rating", "bad"),
        ("heatmap_click", "x", 1.2),
        ("heatmap_click", "viewport", "huge"),
        ("heatmap_click", "clicks", 0),
        ("heatmap_click", "rage", "yes"),
        ("heatmap_click", "selector", ""),
    ],
)
def test_a_reserved_event_with_a_broken_prop_is_refused_naming_it_and_nothing_is_stored(
    visitor: Visitor, ingest_db: Database, name: str, prop: str, value: object
) -> None:
    props = dict(GOOD[name])
    if value is None:
        del props[prop]
    else:
        props[prop] = value
    response = visitor.send(batch(visitor.site, event("pageview"), event(name, props=props)))
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_field"
    assert response.json()["error"]["field"] == f"events.1.props.{prop}"
    assert stored(ingest_db, visitor.site) == []
