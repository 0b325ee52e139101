"""The team's pages in a real browser: inviting, joining by the link, roles, removing, API keys."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.axe import assert_accessible
from tests.support.http import TLS
from tests.web.conftest import PHONE, Console, unique

PASSWORD = "a member's own password"


def test_the_owner_invites_a_viewer_who_joins_by_the_link_and_sees_no_team_page(console: Console) -> None:
    owner = console.signed_in()
    site = console.api(
        owner, "POST", "/api/sites", {"name": "Bakery", "domain": f"{unique('b')}.example.com"}
    )
    assert isinstance(site, dict)
    owner.goto("/team")
    expect(owner.get_by_role("heading", name="Team", level=1)).to_be_visible()
    owner.get_by_role("button", name="Invite someone").click()
    dialog = owner.get_by_role("dialog", name="Invite someone")
    email = f"{unique('viewer')}@example.com"
    dialog.get_by_label("E-mail address").fill(email)
    dialog.get_by_label("Every site, including sites added later").uncheck()
    dialog.get_by_role("button", name="Create invitation link").click()
    expect(owner.locator("#site_ids-error, #invite-sites-error")).to_have_text(
        "Choose at least one site, or give every site."
    )
    dialog.get_by_label("Bakery").check()
    dialog.get_by_role("button", name="Create invitation link").click()
    link = owner.locator("#invitation-url")
    expect(link).to_contain_text("/invite#token=")
    url = link.inner_text()
    console.shoot(owner, "team-invitation-link")
    assert_accessible(owner, "the invitation link dialog")
    owner.get_by_role("button", name="Done").click()
    expect(owner.locator(f'[data-invitation="{email}"]')).to_contain_text("Bakery")

    invitee = console.page()
    invitee.goto(url)
    expect(invitee.get_by_text(f"invited {email} as a viewer")).to_be_visible()
    assert "token" not in invitee.url, "the token leaves the address bar"
    assert_accessible(invitee, "/invite")
    invitee.get_by_label("Password", exact=True).fill(PASSWORD)
    invitee.get_by_label("Repeat the password").fill(PASSWORD + "x")
    invitee.get_by_role("button", name="Accept and sign in").click()
    expect(invitee.get_by_text("The two passwords differ.")).to_be_visible()
    invitee.get_by_label("Repeat the password").fill(PASSWORD)
    invitee.get_by_role("button", name="Accept and sign in").click()
    expect(invitee).to_have_url(f"{console.url}/sites")
    expect(invitee.get_by_role("link", name="Bakery")).to_be_visible()
    nav = invitee.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Reports")).to_be_visible()
    expect(nav.get_by_role("link", name="Team")).to_have_count(0)

    owner.reload()
    row = owner.locator(f'[data-member="{email}"]')
    expect(row).to_contain_text("Bakery")
    row.get_by_role("button", name=f"Remove {email}").click()
    owner.get_by_role("dialog", name="Remove this member?").get_by_role(
        "button", name="Remove member"
    ).click()
    expect(owner.get_by_text(f"{email} was removed and signed out.")).to_be_visible()
    invitee.goto("/sites")
    expect(invitee).to_have_url(f"{console.url}/login?next=%2Fsites")


def test_a_used_link_says_so_and_points_to_sign_in(console: Console) -> None:
    tab = console.page()
    tab.goto("/invite#token=not-a-real-token")
    expect(tab.get_by_role("alert")).to_contain_text("This invitation link is used up, expired or wrong.")
    expect(tab.get_by_role("link", name="Sign in")).to_be_visible()


def test_an_api_key_is_shown_once_then_listed_by_its_prefix_and_revoked(console: Console) -> None:
    owner = console.signed_in(viewport=PHONE, scheme="dark")
    owner.goto("/team/keys")
    owner.get_by_role("button", name="Create key").click()
    dialog = owner.get_by_role("dialog", name="Create an API key")
    name = unique("Report script")
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_role("button", name="Create key").click()
    key = owner.locator("#new-key").inner_text()
    assert key.startswith("sl_")
    console.shoot(owner, "team-key-created-phone-dark")
    assert_accessible(owner, "the new key dialog (phone, dark)")
    owner.get_by_role("button", name="Done").click()
    row = owner.locator(f'[data-key="{name}"]')
    expect(row).to_contain_text(key[:10])
    expect(row).not_to_contain_text(key)
    expect(row).to_contain_text("Never")
    width = owner.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page fits a phone without scrolling sideways: {_overflowing(owner)}"
    row.get_by_role("button", name=f"Revoke the key {name}").click()
    owner.get_by_role("dialog", name="Revoke this key?").get_by_role("button", name="Revoke key").click()
    expect(owner.get_by_text("was revoked")).to_be_visible()
    expect(owner.locator(f'[data-key="{name}"]')).to_have_count(0)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_key_is_made_with_the_scopes_and_site_the_owner_picks_and_an_events_key_shows_how_to_send(
    console: Console, scheme: str
) -> None:
    owner = console.signed_in(viewport={"width": 390, "height": 844}, scheme=scheme)
    site = console.api(
        owner, "POST", "/api/sites", {"name": "Shop API", "domain": f"{unique('e')}.example.com"}
    )
    assert isinstance(site, dict)
    owner.goto("/team/keys")
    owner.get_by_role("button", name="Create key").click()
    dialog = owner.get_by_role("dialog", name="Create an API key")
    name = unique("Order backend")
    dialog.get_by_label("Name").fill(name)
    reports = dialog.get_by_role("checkbox", name="Read reports")
    expect(reports).to_be_checked()  # the default
    expect(reports).to_have_accessible_description(re.compile("Read the figures of the reports"))
    reports.uncheck()
    dialog.get_by_role("button", name="Create key").click()
    expect(dialog.locator("#key-scopes-error")).to_have_text("Choose at least one thing the key may do.")
    send = dialog.get_by_role("checkbox", name="Send events")
    expect(send).to_have_accessible_description(re.compile(r"POST /api/events\). Needs a key for one site."))
    send.check()
    dialog.get_by_role("button", name="Create key").click()
    expect(dialog.locator("#key-site-error")).to_have_text(
        "Events go to one site: choose the site this key sends events to."
    )
    console.shoot(owner, f"team-key-form-{scheme}")
    assert_accessible(owner, f"the new key form with its errors ({scheme})")
    dialog.get_by_label("Sites it works on").select_option(label=f"Only Shop API ({site['domain']})")
    dialog.get_by_role("button", name="Create key").click()
    key = owner.locator("#new-key").inner_text()
    example = owner.locator("#events-example").inner_text()
    assert example.startswith(f'curl -H "Authorization: Bearer {key}"')
    assert example.endswith(f"{console.server.origin}/api/events")
    body = example.split(" -d '", 1)[1].split("' ", 1)[0]
    sent = httpx.post(  # the example as shown, from a real HTTP client: it works as it stands
        f"{console.server.base_url}/api/events",
        content=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        verify=TLS,
        timeout=30,
    )
    assert (sent.status_code, sent.json()) == (202, {"accepted": 1})
    console.shoot(owner, f"team-events-key-{scheme}")
    assert_accessible(owner, f"the new events key with its example ({scheme})")
    assert owner.evaluate("document.documentElement.scrollWidth") <= 390, _overflowing(owner)
    owner.get_by_role("button", name="Done").click()
    row = owner.locator(f'[data-key="{name}"]')
    expect(row).to_contain_text("Shop API")
    expect(row.locator("[data-scopes]")).to_have_attribute("data-scopes", "events:write")
    expect(row).to_contain_text("Send events")
    assert_accessible(owner, f"the list of keys with their scopes ({scheme})")
    assert owner.evaluate("document.documentElement.scrollWidth") <= 390, _overflowing(owner)
    listed = console.api(owner, "GET", "/api/keys")
    assert isinstance(listed, dict)
    made = next(k for k in listed["keys"] if k["name"] == name)
    assert (made["scopes"], made["site_id"]) == (["events:write"], site["id"])


def test_a_shared_link_shows_the_dashboard_read_only_and_nothing_once_deleted(console: Console) -> None:
    owner = console.signed_in()
    site = console.api(
        owner, "POST", "/api/sites", {"name": "Florist", "domain": f"{unique('f')}.example.com"}
    )
    assert isinstance(site, dict)
    owner.goto(f"/sites/{site['id']}/settings")
    owner.get_by_role("navigation", name="Settings sections").get_by_role("link", name="Sharing").click()
    expect(owner.get_by_role("heading", name="Sharing", level=2)).to_be_visible()
    owner.get_by_role("button", name="Create link").click()
    expect(owner.get_by_text("The link is ready.")).to_be_visible()
    url = owner.locator(".share-row code").first.inner_text()
    assert "/share/" in url

    visitor = console.page(viewport=PHONE, scheme="dark")
    visitor.goto(url + "?range=30d")
    expect(visitor.get_by_role("heading", name="Florist", level=1)).to_be_visible()
    expect(visitor.locator('[data-metric="visitors"]')).to_contain_text("0")
    expect(visitor.get_by_text("Shared dashboard, read-only")).to_be_visible()
    expect(visitor.get_by_role("link", name="Sites")).to_have_count(0)
    expect(visitor.get_by_role("button", name="Sign out")).to_have_count(0)
    visitor.get_by_role("button", name="7 days").click()
    expect(visitor).to_have_url(re.compile(r"/share/[^/?]+\?range=7d"))
    expect(visitor.locator('[data-metric="visitors"]')).to_contain_text("0")
    csv_link = visitor.get_by_role("link", name="summary")
    download = visitor.request.get(str(csv_link.get_attribute("href")))
    assert download.status == 200
    assert download.text().startswith("metric,current")
    expect(visitor.get_by_role("link", name="raw events of the period")).to_have_count(0)
    assert visitor.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], _overflowing(visitor)
    console.shoot(visitor, "shared-dashboard-phone-dark")
    visitor.wait_for_load_state("networkidle")
    assert_accessible(visitor, "a shared dashboard (phone, dark)")
    assert_accessible(owner, "the site's settings with the Sharing section")

    owner.get_by_role("button", name=re.compile("^Delete")).first.click()
    expect(owner.get_by_text("The link was deleted")).to_be_visible()
    response = visitor.goto(url)
    assert response is not None
    assert response.status == 404
    expect(visitor.get_by_role("heading", name="This shared dashboard does not exist")).to_be_visible()


def test_a_shared_link_with_a_password_asks_for_it_first(console: Console) -> None:
    owner = console.signed_in()
    site = console.api(owner, "POST", "/api/sites", {"name": "Baker", "domain": f"{unique('k')}.example.com"})
    assert isinstance(site, dict)
    share = console.api(owner, "POST", f"/api/sites/{site['id']}/shares", {"password": "crusty loaves"})
    assert isinstance(share, dict)
    visitor = console.page(viewport=PHONE)
    visitor.goto(str(share["url"]))
    # The page says whose dashboard it is and what the password opens, and the label sits apart.
    expect(visitor.get_by_role("heading", name="Shared dashboard: Baker", level=1)).to_be_visible()
    expect(visitor.locator("main")).to_contain_text(f"The analytics of {site['domain']}")
    expect(visitor.locator("main")).to_contain_text("enter the one you were given with the link")
    label = visitor.locator("label[for='share-password']").bounding_box()
    field = visitor.get_by_label("Password").bounding_box()
    assert label is not None
    assert field is not None
    assert field["y"] >= label["y"] + label["height"] + 2, (label, field)
    assert field["width"] >= 250, field
    console.shoot(visitor, "shared-password-phone")
    assert_accessible(visitor, "a shared dashboard's password form")
    visitor.get_by_label("Password").fill("soft loaves")
    visitor.get_by_role("button", name="Open dashboard").click()
    expect(visitor.get_by_text("The password is wrong.")).to_be_visible()
    visitor.get_by_label("Password").fill("crusty loaves")
    visitor.get_by_role("button", name="Open dashboard").click()
    expect(visitor.get_by_role("heading", name="Baker", level=1)).to_be_visible()
    visitor.reload()
    expect(visitor.get_by_role("heading", name="Baker", level=1)).to_be_visible()


def _overflowing(tab: object) -> list[str]:
    return tab.evaluate(  # type: ignore[attr-defined,no-any-return]
        """() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .slice(0, 5).map(e => e.tagName + '.' + e.className)"""
    )


def test_removing_an_admin_says_which_of_their_keys_links_and_invitations_end(console: Console) -> None:
    owner = console.signed_in(viewport=PHONE, scheme="dark")
    invitation = console.api(
        owner, "POST", "/api/invitations", {"email": f"{unique('admin')}@example.com", "role": "admin"}
    )
    assert isinstance(invitation, dict)
    admin = console.page()
    token = str(invitation["url"]).split("#token=", 1)[1]
    accepted = admin.context.request.post(
        "/api/invitations/accept",
        data={"token": token, "password": PASSWORD},
        headers={"Origin": console.server.origin},
    )
    assert accepted.status == 201, accepted.text()
    console.api(admin, "POST", "/api/keys", {"name": "Their key"})
    console.api(admin, "POST", "/api/invitations", {"email": f"{unique('x')}@example.com", "role": "admin"})
    owner.goto("/team")
    email = invitation["email"]
    owner.locator(f'[data-member="{email}"]').get_by_role("button", name=f"Remove {email}").click()
    dialog = owner.get_by_role("dialog", name="Remove this member?")
    expect(dialog).to_contain_text("1 pending invitation and 1 API key stop working")
    assert_accessible(owner, "the remove member dialog")
    dialog.get_by_role("button", name="Remove member").click()
    expect(owner.get_by_text(f"{email} was removed and signed out.")).to_be_visible()
    keys = console.api(owner, "GET", "/api/keys")
    assert isinstance(keys, dict)
    assert all(k["name"] != "Their key" for k in keys["keys"])
