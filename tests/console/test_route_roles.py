"""Every registered console route called as each role (owner, admin, viewer, a viewer given one
site) and as an API key of each scope (``POST /api/events``, ingest's one route under ``/api/``,
included), and with its ids spelled every way the framework reads them: each principal reaches
what its role and scope allow, and nothing else.

The routes are read from the application itself, so a route added later is checked too.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi._compat import ModelField
from fastapi.dependencies.models import Dependant
from pydantic import TypeAdapter, ValidationError

from sightline.console.guard import STATE_CHANGING
from sightline.console.ids import QUERY_IDS, TEXT_PARAMS
from sightline.console.roles import ADMIN_READS, EVERYONE_MAY, api_routes, is_key_route
from sightline.teams.scopes import EVENTS_ROUTE, SCOPES, scope_for
from tests.conftest import sign_in
from tests.console.route_lists import BIG, ROUTES, SIGNED, UPLOADS, ids
from tests.imports.helpers import upload
from tests.recordings.helpers import chunk, new_recording_id, page_events, post_chunk, recording_site
from tests.support.http import TLS
from tests.support.routes import Route, document_app
from tests.support.server import LiveServer
from tests.support.team import MEMBER_PASSWORD, token_of
from tests.surveys.helpers import survey_body

# Roles: every route, for every role. Path ids are filled with an id no object has, so that no
# call touches the owner (id 1) or anything else that exists.
UNUSED_ID = "987654321"
KEY_ROUTES = [r for r in ROUTES if is_key_route(r.method, r.template)]
# Every route a key might call: the console's, and ingest's POST /api/events (a plain route the
# guard does not see, which checks the key itself against the same table).
EVENTS = Route(*EVENTS_ROUTE)
KEYED = [*SIGNED, EVENTS]
MEMBER_ROUTES = [r for r in SIGNED if (r.method, r.template) != ("POST", "/api/logout")]


def _path(route: Route, value: str = UNUSED_ID) -> str:
    return re.sub(r"\{[^}]+\}", value, route.template)


def _call(client: httpx.Client, route: Route, path: str | None = None) -> httpx.Response:
    if route in UPLOADS:  # a file, not JSON
        headers = {"Content-Type": "text/csv"}
        return client.request(route.method, path or _path(route), headers=headers, content=b"date\n")
    headers = {"Content-Type": "application/json"}
    return client.request(route.method, path or _path(route), headers=headers, content=b"{}")


@pytest.fixture(scope="module")
def members(console_server: LiveServer) -> Iterator[dict[str, Any]]:
    """An admin and two viewers (one given one site) of the owner's team, signed in, and an API key."""
    made: dict[str, Any] = {"owner": sign_in(console_server)}
    site = made["owner"].post("/api/sites", json={"name": "Matrix", "domain": "matrix.example.com"}).json()
    for role, site_ids in (("admin", None), ("viewer", None), ("scoped", [site["id"]])):
        invitation = (
            made["owner"]
            .post(
                "/api/invitations",
                json={"email": f"{role}@matrix.example.com", "role": "admin" if role == "admin" else "viewer"}
                | ({"site_ids": site_ids} if site_ids else {}),
            )
            .json()
        )
        client = console_server.client()
        accepted = client.post(
            "/api/invitations/accept",
            json={"token": token_of(invitation["url"]), "password": MEMBER_PASSWORD},
        )
        assert accepted.status_code == 201, accepted.text
        made[role] = client
    key = made["owner"].post("/api/keys", json={"name": "matrix"}).json()["key"]
    made["key"] = httpx.Client(
        verify=TLS, base_url=console_server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    made["site"] = site
    yield made
    for name, client in made.items():
        if name != "site":
            client.close()


def test_an_admin_may_call_every_route(members: dict[str, Any]) -> None:
    for route in MEMBER_ROUTES:
        response = _call(members["admin"], route)
        assert response.status_code not in {401, 403}, f"{route}: {response.status_code} {response.text}"


def test_a_viewer_may_read_but_every_change_is_403_forbidden(members: dict[str, Any]) -> None:
    for route in MEMBER_ROUTES:
        response = _call(members["viewer"], route)
        if (route.method, route.template) in EVERYONE_MAY:  # their own choice (e-mails)
            assert response.status_code not in {401, 403}, f"{route}: {response.status_code} {response.text}"
        elif route.method in STATE_CHANGING or (route.method, route.template) in ADMIN_READS:
            assert response.status_code == 403, f"{route} let a viewer through: {response.status_code}"
            assert response.json()["error"]["code"] == "forbidden"
        else:
            assert response.status_code not in {401, 403}, f"{route}: {response.status_code} {response.text}"
    assert members["viewer"].get("/api/me").json()["role"] == "viewer"


def test_forbidden_comes_after_the_origin_type_and_size_checks(
    members: dict[str, Any], console_server: LiveServer
) -> None:
    viewer = members["viewer"]
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, cookies=viewer.cookies, timeout=30
    ) as no_origin:
        assert no_origin.post("/api/sites", json={}).status_code == 403
        assert no_origin.post("/api/sites", json={}).json()["error"]["code"] == "bad_origin"
    assert viewer.post("/api/sites", content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 415
    big = viewer.post("/api/sites", content=BIG, headers={"Content-Type": "application/json"})
    assert big.status_code == 413
    assert viewer.post("/api/sites", json={}).json()["error"]["code"] == "forbidden"


def test_a_viewer_given_one_site_finds_no_other_site_on_any_route(members: dict[str, Any]) -> None:
    site_routes = [r for r in MEMBER_ROUTES if "{site_id}" in r.template and r.method == "GET"]
    assert site_routes
    for route in site_routes:
        if (route.method, route.template) in ADMIN_READS:
            continue
        response = _call(members["scoped"], route, route.template.replace("{site_id}", UNUSED_ID))
        assert response.status_code == 404, f"{route}: {response.status_code}"
    other = members["owner"].post("/api/sites", json={"name": "Other", "domain": "other.matrix.example.com"})
    listed = [s["id"] for s in members["scoped"].get("/api/sites").json()["sites"]]
    assert listed == [members["site"]["id"]]
    assert other.json()["id"] not in listed


def test_the_matrix_sees_every_key_route_and_ingests_one_route_under_api() -> None:
    app = document_app("sightline-keyed-")
    plain = {
        str(getattr(r, "path", ""))
        for r in app.router.routes
        if str(getattr(r, "path", "")).startswith("/api/") and r not in api_routes(app.router.routes)
    }
    assert plain == {EVENTS.template}
    scoped = {str(r) for r in KEYED if scope_for(r.method, r.template)}
    assert {
        "GET /api/sites",
        "GET /api/sites/{site_id}",
        "POST /api/sites",
        "DELETE /api/goals/{goal_id}",
    } <= scoped
    assert "GET /api/sites/{site_id}/reports/summary" in scoped
    assert "POST /api/events" in scoped


@pytest.mark.parametrize("scope", list(SCOPES))
def test_a_key_passes_the_guard_on_the_routes_of_its_scope_only(
    scope: str, members: dict[str, Any], console_server: LiveServer
) -> None:
    """A key of one scope on every route: 401 where no scope lets keys in, 403 ``forbidden`` on
    another scope's route, and through the guard on its own scope's. Ids name nothing (nothing is
    changed), except for events, whose key is made for the matrix's site."""
    body: dict[str, Any] = {"name": f"matrix {scope}", "scopes": [scope]}
    site_id = UNUSED_ID
    if scope == "events:write":
        body["site_id"] = members["site"]["id"]
        site_id = str(members["site"]["id"])
    made = members["owner"].post("/api/keys", json=body)
    assert made.status_code == 201, made.text
    assert made.json()["scopes"] == [scope]
    headers = {"Authorization": f"Bearer {made.json()['key']}"}
    mine = 0
    with httpx.Client(verify=TLS, base_url=console_server.base_url, headers=headers, timeout=30) as key:
        for route in KEYED:
            response = _call(key, route, _path(route, site_id))
            needs = scope_for(route.method, route.template)
            if needs is None:
                assert response.status_code == 401, f"{route} accepted a {scope} key: {response.status_code}"
                assert response.json()["error"]["code"] == "not_signed_in"
            elif needs != scope:
                assert response.status_code == 403, (
                    f"{route} let a {scope} key through: {response.status_code}"
                )
                assert response.json()["error"]["code"] == "forbidden"
                assert needs in response.json()["error"]["message"]
            else:
                mine += 1
                assert response.status_code not in {401, 403}, (
                    f"{route}: {response.status_code} {response.text}"
                )
    assert mine >= 1


def test_an_events_write_key_for_every_site_is_refused_at_creation_naming_the_site_id(
    members: dict[str, Any],
) -> None:
    """Such a key could send events to no site (every call would be 403), so it is never made."""
    refused = members["owner"].post("/api/keys", json={"name": "no site", "scopes": ["events:write"]})
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["field"] == "site_id"


def test_a_key_is_not_checked_for_origin_but_a_session_is_even_with_a_key(
    members: dict[str, Any], console_server: LiveServer
) -> None:
    made = members["owner"].post("/api/keys", json={"name": "origin", "scopes": ["sites:write"]}).json()
    bearer = {"Authorization": f"Bearer {made['key']}"}
    with httpx.Client(verify=TLS, base_url=console_server.base_url, timeout=30) as client:
        for origin in ({}, {"Origin": "http://evil.example"}):
            response = client.post(
                f"/api/sites/{UNUSED_ID}/goals",
                json={"name": "G", "kind": "event", "event": "e"},
                headers=bearer | origin,
            )
            assert response.status_code == 404, response.text  # through the guard: no such site
    with httpx.Client(
        verify=TLS, base_url=console_server.base_url, cookies=members["owner"].cookies, timeout=30
    ) as both:  # a session and a key: the session's request, with the session's Origin check
        response = both.post(f"/api/sites/{UNUSED_ID}/goals", json={}, headers=bearer)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "bad_origin"


def test_a_viewer_may_sign_out(console_server: LiveServer, members: dict[str, Any]) -> None:
    invitation = (
        members["owner"]
        .post("/api/invitations", json={"email": "leaving@matrix.example.com", "role": "viewer"})
        .json()
    )
    with console_server.client() as client:
        client.post(
            "/api/invitations/accept",
            json={"token": token_of(invitation["url"]), "password": MEMBER_PASSWORD},
        )
        assert client.post("/api/logout", json={}).status_code == 204
        assert client.get("/api/me").status_code == 401


# Ids spelled another way. FastAPI reads an int path or query parameter leniently (pydantic's lax
# mode), so each of these names the same object as the plain digits; a guard that read them
# otherwise, or read the first of a repeated ``?site_id=`` where FastAPI reads the last, checked
# one site while the handler served another. Every one must be refused for every principal.
def lenient_spellings(digits: str) -> list[str]:
    """Text FastAPI's ``int`` parameters accept as ``int(digits)`` (see the test below)."""
    found = [f"{digits}.0", f"{digits}.00", f"+{digits}", f" {digits}", f"{digits} ", f"\t{digits}"]
    found += [f"{digits}\n", f"0{digits}", f"00{digits}", f"+0{digits}.0", f" +{digits}.0 "]
    if len(digits) > 1:
        found.append(f"{digits[0]}_{digits[1:]}")
    return found


def spellings(digits: str) -> list[str]:
    """The lenient spellings, and those Python's ``int()`` accepts too (full-width digits)."""
    full_width = "".join(chr(0xFF10 + int(d)) for d in digits)
    return [*lenient_spellings(digits), full_width]


def test_the_spellings_are_those_the_framework_accepts_for_an_int() -> None:
    for value in (7, 42, 987654321):
        for text in lenient_spellings(str(value)):
            assert TypeAdapter(int).validate_python(text) == value, repr(text)
    with pytest.raises(ValidationError):
        TypeAdapter(int).validate_python(chr(0xFF14) + chr(0xFF12))  # 42 in full-width digits


def _id_fields(dependant: Dependant) -> Iterator[ModelField]:
    yield from dependant.path_params
    yield from (field for field in dependant.query_params if field.name in QUERY_IDS)
    for inner in dependant.dependencies:
        yield from _id_fields(inner)


def test_every_id_a_console_handler_takes_is_read_as_the_guard_reads_it() -> None:
    """The guard refuses every other spelling; the handlers' types refuse them too, so a handler
    can only ever receive the id the guard checked."""
    app = document_app("sightline-ids-")
    checked = 0
    for route in api_routes(app.router.routes):
        if not route.path.startswith("/api/"):
            continue
        for field in _id_fields(route.dependant):
            if field.name in TEXT_PARAMS:
                continue
            where = ("path" if field in route.dependant.path_params else "query", field.name)
            assert field.validate("7", {}, loc=where) == (7, []), f"{route.path} {field.name}"
            for text in spellings("7"):
                value, errors = field.validate(text, {}, loc=where)
                assert errors, f"{route.path}: {field.name}={text!r} was read as {value!r}"
            checked += 1
    assert checked > 40


REFUSED = {401, 403, 404, 405, 422, 429}


@pytest.fixture(scope="module")
def other_site(console_server: LiveServer, members: dict[str, Any]) -> dict[str, str]:
    """A site the scoped principals may not read, with one object of each kind a route names."""
    owner = members["owner"]
    site = recording_site(owner, f"other-{uuid.uuid4().hex[:8]}.example")
    site_id = str(site.id)
    goal = owner.post(f"/api/sites/{site_id}/goals", json={"name": "G", "kind": "event", "event": "e"})
    survey = owner.post("/api/feedback/surveys", json=survey_body(site.id))
    funnel = owner.post(f"/api/sites/{site_id}/funnels", json={"name": "F", "steps": ["page:/", "page:/b"]})
    segment = owner.post(f"/api/sites/{site_id}/segments", json={"name": "S", "filters": {}})
    share = owner.post(f"/api/sites/{site_id}/shares", json={})
    imported = upload(owner, site.id, "days.csv", b"date,visitors,visits,pageviews\n2024-01-01,1,2,3\n")
    recording = new_recording_id()
    posted = post_chunk(console_server, site, recording, 0, chunk(page_events(1_700_000_000_000)))
    made = {"goal": goal, "survey": survey, "share": share, "import": imported, "recording": posted}
    for name, response in made.items():
        assert response.status_code in {201, 202}, f"{name}: {response.text}"
    return {
        "site_id": site_id,
        "goal_id": str(goal.json()["id"]),
        "survey_id": str(survey.json()["id"]),
        "share_id": str(share.json()["id"]),
        "import_id": str(imported.json()["id"]),
        "recording_id": recording,
        "funnels": str(funnel.json().get("id", UNUSED_ID)),
        "segments": str(segment.json().get("id", UNUSED_ID)),
    }


def _filled(route: Route, ids: dict[str, str], spelled: str | None = None, text: str = "") -> str:
    """The route's path naming ``ids``' objects; the parameter ``spelled`` written as ``text``."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == spelled:
            return quote(text, safe="")
        if name == "item_id":
            return ids[route.template.split("/")[2]]
        return ids.get(name, {"visitor_id": "visitor-1", "revision": "1"}.get(name, UNUSED_ID))

    return re.sub(r"\{([^}]+)\}", value, route.template)


def _scoped(console_server: LiveServer, members: dict[str, Any]) -> Iterator[tuple[str, httpx.Client]]:
    """The viewer given one site, and a fresh key of every scope made for that site (each key has
    its own requests per minute)."""
    yield "viewer given one site", members["scoped"]
    made = members["owner"].post(
        "/api/keys", json={"name": "scoped", "site_id": members["site"]["id"], "scopes": list(SCOPES)}
    )
    assert made.status_code == 201, made.text
    headers = {"Authorization": f"Bearer {made.json()['key']}"}
    with httpx.Client(verify=TLS, base_url=console_server.base_url, headers=headers, timeout=30) as key:
        yield "key scoped to one site", key


ID_ROUTES = [r for r in SIGNED if re.search(r"\{(?!visitor_id|recording_id)[^}]+\}", r.template)]


@pytest.mark.parametrize("route", ID_ROUTES, ids=ids(ID_ROUTES))
def test_an_id_spelled_another_way_reaches_nothing_for_a_scoped_principal(
    route: Route, console_server: LiveServer, members: dict[str, Any], other_site: dict[str, str]
) -> None:
    for who, client in _scoped(console_server, members):
        for name in re.findall(r"\{([^}]+)\}", route.template):
            if name in {"visitor_id", "recording_id"}:
                continue
            canonical = other_site.get(name, other_site.get(route.template.split("/")[2], UNUSED_ID))
            for text in [canonical, *spellings(canonical)]:
                response = _call(client, route, _filled(route, other_site, name, text))
                assert response.status_code in REFUSED, (
                    f"{who}: {route} with {name}={text!r} answered {response.status_code}"
                )
                assert response.json()["error"]["code"]


QUERY_ROUTES = [r for r in SIGNED if r.method == "GET" and "_id}" not in r.template.replace("{site_id}", "")]


@pytest.mark.parametrize("route", QUERY_ROUTES, ids=ids(QUERY_ROUTES))
def test_a_site_id_query_spelled_another_way_or_repeated_is_refused_for_a_scoped_principal(
    route: Route, console_server: LiveServer, members: dict[str, Any], other_site: dict[str, str]
) -> None:
    own = str(members["site"]["id"])
    other = other_site["site_id"]
    path = _path(route, own)
    queries = [f"site_id={quote(text, safe='')}" for text in spellings(other)]
    queries += [f"site_id={own}&site_id={other}", f"site_id={other}&site_id={own}"]
    for who, client in _scoped(console_server, members):
        for query in queries:
            response = client.get(f"{path}?{query}")
            assert response.status_code in REFUSED, f"{who}: {path}?{query} answered {response.status_code}"


def test_a_shared_link_reaches_only_its_site_however_another_site_is_spelled(
    members: dict[str, Any], other_site: dict[str, str], console_server: LiveServer
) -> None:
    own = members["site"]["id"]
    other = other_site["site_id"]
    kinds = [r.template.removeprefix("/api/sites/{site_id}/reports/") for r in KEY_ROUTES]
    queries = [f"site_id={quote(text, safe='')}" for text in [other, *spellings(other)]]
    queries += [f"site_id={own}&site_id={other}", f"site_id={other}&site_id={own}"]
    for kind in kinds:
        share = members["owner"].post(f"/api/sites/{own}/shares", json={}).json()
        link = share["url"].removeprefix(console_server.origin)
        with httpx.Client(verify=TLS, base_url=console_server.base_url, timeout=30) as visitor:
            for query in queries:
                for path in (
                    f"{link}/api/reports/{kind}?{query}",
                    f"{link}/api/reports/{kind}?range=7d&{query}",
                ):
                    response = visitor.get(path)
                    if response.status_code not in REFUSED:
                        assert response.status_code == 200, f"{path}: {response.status_code}"
                        if response.headers["content-type"].startswith("application/json"):
                            assert response.json().get("site_id", own) == own, path


@pytest.mark.parametrize("route", ID_ROUTES, ids=ids(ID_ROUTES))
def test_an_id_spelled_another_way_is_refused_for_the_owner_too(
    route: Route, members: dict[str, Any], other_site: dict[str, str]
) -> None:
    for name in re.findall(r"\{([^}]+)\}", route.template):
        if name in {"visitor_id", "recording_id"}:
            continue
        canonical = other_site.get(name, other_site.get(route.template.split("/")[2], UNUSED_ID))
        for text in spellings(canonical)[:3]:
            response = _call(members["owner"], route, _filled(route, other_site, name, text))
            assert response.status_code == 404, f"{route} with {name}={text!r}: {response.status_code}"
            assert response.json()["error"]["code"] == "not_found"
