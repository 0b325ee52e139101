"""The team's, API keys', notes' and shared links' forms at 390 px: a value the API refuses is
answered in the owner's words (what happened and what to do) beside its field, not in the API's
own message, and the page does not scroll sideways."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.support.team import MEMBER_PASSWORD, token_of
from tests.web.conftest import PHONE, Console, unique

PHONE_390 = {**PHONE, "width": 390}


def _fits(tab: Page) -> None:
    width = tab.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE_390["width"], f"the page scrolls sideways at 390 px: {width} px"


def _site(console: Console, tab: Page, name: str) -> int:
    site = console.api(tab, "POST", "/api/sites", {"name": name, "domain": unique("forms") + ".example.com"})
    assert isinstance(site, dict)
    return int(site["id"])


def test_an_invitation_to_a_wrong_address_says_what_to_type(console: Console) -> None:
    tab = console.signed_in(viewport=PHONE_390)
    tab.goto("/team")
    tab.get_by_role("button", name="Invite someone").click()
    dialog = tab.get_by_role("dialog", name="Invite someone")
    dialog.get_by_label("E-mail address").fill("someone@")
    dialog.get_by_role("button", name="Create invitation link").click()
    expect(dialog.locator("#invite-email-error")).to_have_text(
        "That is not an address an invitation can go to: type an e-mail address such as name@example.com."
    )
    expect(dialog.get_by_label("E-mail address")).to_have_attribute("aria-invalid", "true")
    _fits(tab)
    console.shoot(tab, "form-invitation-refused-390")


def test_a_role_the_api_refuses_leaves_the_member_as_they_were_and_says_which_roles_exist(
    console: Console,
) -> None:
    tab = console.signed_in(viewport=PHONE_390)
    email = unique("member") + "@example.com"
    invitation = console.api(tab, "POST", "/api/invitations", {"email": email, "role": "viewer"})
    assert isinstance(invitation, dict)
    joining = console.page()
    console.api(
        joining,
        "POST",
        "/api/invitations/accept",
        {"token": token_of(str(invitation["url"])), "password": MEMBER_PASSWORD},
    )
    tab.goto("/team")
    role = tab.get_by_label(f"Role of {email}")
    expect(role).to_have_value("viewer")
    role.evaluate("select => select.add(new Option('Boss', 'boss'))")  # a value no form offers
    role.select_option("boss")
    expect(tab.get_by_text(f"The role of {email} did not change.")).to_have_text(
        f"The role of {email} did not change. That role cannot be given: choose viewer or admin."
    )
    expect(role).to_have_value("viewer")
    _fits(tab)


def test_a_key_for_a_site_deleted_meanwhile_says_to_choose_a_listed_site(console: Console) -> None:
    tab = console.signed_in(viewport=PHONE_390)
    site_id = _site(console, tab, "Gone soon")
    tab.goto("/team/keys")
    tab.get_by_role("button", name="Create key").click()
    dialog = tab.get_by_role("dialog", name="Create an API key")
    dialog.get_by_label("Name").fill("Sales script")
    dialog.get_by_label("Sites it works on").select_option(str(site_id))
    deleted = tab.context.request.fetch(
        f"/api/sites/{site_id}", method="DELETE", headers={"Origin": console.server.origin}
    )
    assert deleted.status == 204, deleted.text()
    dialog.get_by_role("button", name="Create key").click()
    expect(dialog.locator("#key-site-error")).to_have_text(re.compile(r"^Choose one of the sites listed"))
    expect(dialog.locator("#key-site-error")).not_to_contain_text("No site with id")
    _fits(tab)
    console.shoot(tab, "form-key-refused-390")


def test_a_shared_links_short_password_says_how_long_it_must_be(console: Console) -> None:
    tab = console.signed_in(viewport=PHONE_390)
    site_id = _site(console, tab, "Shared shop")
    tab.goto(f"/sites/{site_id}/settings")
    tab.get_by_role("navigation", name="Settings sections").get_by_role("link", name="Sharing").click()
    tab.get_by_label("Password for a new link (optional)").fill("short")
    tab.get_by_role("button", name="Create link").click()
    expect(tab.locator("#share-password-error")).to_have_text(
        "That password is too short: give the link a password of at least 8 characters, "
        "or leave it empty for a link anyone can open."
    )
    expect(tab.locator(".share-row")).to_have_count(0)
    _fits(tab)
    console.shoot(tab, "form-share-refused-390")


def test_a_note_with_a_line_break_says_to_keep_it_on_one_line(console: Console) -> None:
    tab = console.signed_in(viewport=PHONE_390)
    site_id = _site(console, tab, "Noted forms")
    tab.goto(f"/sites/{site_id}/reports?range=7d")
    tab.get_by_role("button", name="+ Add a note to the graph").click()
    form = tab.get_by_role("form", name="Add a note to the graph")
    form.get_by_label("What happened").fill("Launched\u2028the new pricing page")  # pasted with a break
    form.get_by_role("button", name="Add the note").click()
    expect(form.get_by_role("alert")).to_have_text(
        re.compile(r"^The note was refused: write what happened on one line")
    )
    expect(tab.locator(".report-note-item")).to_have_count(0)
    _fits(tab)
    console.shoot(tab, "form-note-refused-390")
