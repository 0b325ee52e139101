"""Umami's and Matomo's exports through the API of a real server, on both databases and store
engines: the sample files in ``data/`` (built from the columns each tool writes) import by the
same path as Plausible's, and the dashboard's figures afterwards are the tools' own; a bad file
is 422 naming the file, the line and the column, and leaves no import."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import httpx

from tests.imports.helpers import upload, wait_finished
from tests.imports.test_api import console_server, new_site, owner  # noqa: F401 (fixtures)

DATA = Path(__file__).parent / "data"
DAYS = {"range": "custom", "from": "2024-03-04", "to": "2024-03-10"}


def report(client: httpx.Client, site_id: int, kind: str, **params: Any) -> dict[str, Any]:
    response = client.get(f"/api/sites/{site_id}/reports/{kind}", params={**DAYS, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def values(
    client: httpx.Client, site_id: int, dimension: str, metric: str = "visits"
) -> list[tuple[str, int]]:
    rows = report(client, site_id, "breakdown", dimension=dimension)["rows"]
    return [(row["value"], row[metric]) for row in rows]


def matomo_zip(replace: dict[str, bytes] | None = None) -> bytes:
    """The sample reports zipped as an owner would zip the files Matomo's API wrote."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((DATA / "matomo").iterdir()):
            body = (replace or {}).get(path.name, path.read_bytes())
            archive.writestr(f"matomo-export/{path.name}", body)
    return buffer.getvalue()


def imported(client: httpx.Client, site_id: int, name: str, body: bytes, kind: str) -> dict[str, Any]:
    response = upload(client, site_id, name, body)
    assert response.status_code == 202, response.text
    done = wait_finished(client, int(response.json()["id"]))
    assert done["status"] == "done", done
    assert done["kind"] == kind
    return done


def test_umamis_events_become_the_dashboards_figures_counted_as_umami_counts_them(
    owner: httpx.Client,  # noqa: F811
) -> None:
    site_id = new_site(owner, "From Umami")
    done = imported(owner, site_id, "umami-events.csv", (DATA / "umami-events.csv").read_bytes(), "umami")
    assert (done["from"], done["to"]) == ("2024-03-04", "2024-03-05")
    summary = report(owner, site_id, "summary")
    assert summary["imported"] == {"included": True, "reason": None}
    assert summary["current"] == {
        "visitors": 4,  # two sessions a day, summed over the days
        "visits": 4,
        "pageviews": 6,  # the performance beacon and the custom event are not pageviews
        "views_per_visit": 1.5,
        "bounce_rate": 0.5,
        "visit_duration": 52,  # (60 + 150) / 4, from first to last pageview
    }
    points = {p["time"]: p for p in report(owner, site_id, "timeseries")["points"]}
    assert (points["2024-03-04"]["visits"], points["2024-03-05"]["pageviews"]) == (2, 3)
    assert values(owner, site_id, "pages", "pageviews") == [
        ("/", 2),
        ("/pricing", 2),
        ("/blog/launch", 1),
        ("/docs", 1),
    ]
    assert values(owner, site_id, "sources") == [  # named as live visits' sources are
        ("(none)", 2),
        ("Google", 1),
        ("Hacker News", 1),
    ]
    assert values(owner, site_id, "utm_sources") == [("newsletter", 1)]
    assert values(owner, site_id, "entry_pages") == [("/", 2), ("/blog/launch", 1), ("/pricing", 1)]
    assert values(owner, site_id, "exit_pages") == [("/pricing", 2), ("/blog/launch", 1), ("/docs", 1)]
    assert values(owner, site_id, "countries") == [("DE", 2), ("AT", 1), ("FR", 1)]
    assert values(owner, site_id, "regions") == [("DE-BE", 2), ("FR-IDF", 1)]
    assert values(owner, site_id, "devices") == [("desktop", 3), ("mobile", 1)]
    assert values(owner, site_id, "browsers") == [("Chrome", 2), ("Firefox", 1), ("Mobile Safari", 1)]
    assert values(owner, site_id, "operating_systems") == [("Windows", 2), ("Linux", 1), ("iOS", 1)]
    assert report(owner, site_id, "breakdown", dimension="events")["rows"] == [
        {"value": "signup", "visitors": 1, "events": 1}
    ]
    again = upload(owner, site_id, "renamed.csv", (DATA / "umami-events.csv").read_bytes())
    assert (again.status_code, again.json()["duplicate"]) == (200, True)
    assert owner.delete(f"/api/imports/{done['id']}").status_code == 204
    assert report(owner, site_id, "summary")["current"]["visits"] == 0


def test_matomos_reports_become_the_dashboards_figures(owner: httpx.Client) -> None:  # noqa: F811
    site_id = new_site(owner, "From Matomo")
    done = imported(owner, site_id, "matomo.zip", matomo_zip(), "matomo")
    assert len(done["tables"]) == 10
    assert done["tables"][:2] == ["Actions.get.csv", "VisitsSummary.get.csv"]
    summary = report(owner, site_id, "summary")
    assert summary["current"] == {
        "visitors": 13,  # Matomo's unique visitors of each day, summed over the days
        "visits": 16,
        "pageviews": 37,  # Actions.get's pageviews, not the summary's actions
        "views_per_visit": 2.31,
        "bounce_rate": 0.4375,
        "visit_duration": 94,  # 1500 s / 16 visits
    }
    assert values(owner, site_id, "pages", "pageviews") == [("/pricing", 19), ("/blog/launch", 5)]
    assert values(owner, site_id, "entry_pages") == [("/pricing", 10), ("/blog/launch", 6)]
    assert values(owner, site_id, "exit_pages") == [("/pricing", 11), ("/blog/launch", 5)]
    assert values(owner, site_id, "sources") == [("example.org", 4), ("Google", 3), ("DuckDuckGo", 1)]
    assert values(owner, site_id, "countries") == [("DE", 7), ("(none)", 3)]
    assert values(owner, site_id, "devices") == [("desktop", 8), ("mobile", 2)]
    assert values(owner, site_id, "browsers") == [("Edge", 5), ("Firefox", 5)]
    assert values(owner, site_id, "operating_systems") == [("Windows", 6), ("Linux", 4)]
    assert report(owner, site_id, "breakdown", dimension="events")["rows"] == [
        {"value": "Signup", "visitors": 3, "events": 4}
    ]


def test_a_bad_umami_or_matomo_file_is_422_naming_the_file_the_line_and_the_column(
    owner: httpx.Client,  # noqa: F811
) -> None:
    site_id = new_site(owner, "Bad exports")
    events = (DATA / "umami-events.csv").read_bytes().replace(b"2024-03-05 08:00:00.000+00", b"yesterday", 1)
    error = upload(owner, site_id, "umami-events.csv", events).json()["error"]
    assert error["field"] == "umami-events.csv:6:created_at"
    assert "umami-events.csv line 6, column created_at: 'yesterday' is not a time" in error["message"]
    pages = (DATA / "matomo" / "Actions.getPageUrls.csv").read_bytes().replace(b",6,12,", b",6,twelve,")
    error = upload(owner, site_id, "matomo.zip", matomo_zip({"Actions.getPageUrls.csv": pages})).json()[
        "error"
    ]
    assert error["field"] == "matomo-export/Actions.getPageUrls.csv:2:nb_hits"
    without = io.BytesIO()
    with zipfile.ZipFile(without, "w") as archive:
        archive.writestr("VisitsSummary.get.csv", (DATA / "matomo" / "VisitsSummary.get.csv").read_bytes())
    response = upload(owner, site_id, "matomo.zip", without.getvalue())
    assert response.status_code == 422
    assert "no Actions.get report" in response.json()["error"]["message"]
    stranger = upload(owner, site_id, "matomo.zip", matomo_zip({"VisitsSummary.get.csv": b"x"}))
    assert stranger.status_code == 422
    single_day = b"nb_uniq_visitors,nb_visits\n3,4\n"
    named = upload(
        owner,
        site_id,
        "x.zip",
        _zip({"VisitsSummary.get.csv": single_day, "Actions.get.csv": b"date,nb_pageviews\n"}),
    )
    assert named.json()["error"]["message"].startswith("VisitsSummary.get.csv lacks the column date")
    assert owner.get(f"/api/sites/{site_id}/imports").json()["imports"] == []


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    return buffer.getvalue()
