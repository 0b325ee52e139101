"""Signing in and out of the console in a real browser."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.conftest import OWNER_EMAIL, OWNER_PASSWORD
from tests.support.http import TLS
from tests.web.conftest import PHONE, Console


def test_login_shows_the_generic_error_for_a_wrong_password_then_signs_in(console: Console) -> None:
    page = console.page()
    page.goto("/sites")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fsites$"))
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    email = page.get_by_label("E-mail address")
    password = page.get_by_label("Password")
    expect(email).to_have_attribute("autocomplete", "username")
    expect(password).to_have_attribute("autocomplete", "current-password")
    expect(email).to_be_focused()
    console.shoot(page, "login-light-desktop")

    email.fill(OWNER_EMAIL)
    password.fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("The e-mail address or the password is wrong.")
    console.shoot(page, "login-wrong-password")

    password.fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{console.url}/sites")
    expect(page.get_by_role("heading", level=1, name="Sites")).to_be_visible()
    expect(page.get_by_text(f"Signed in as {OWNER_EMAIL}")).to_be_attached()
    expect(page).to_have_title("Sites · Sightline")


def test_login_throttling_shows_the_wait_before_the_next_attempt(console: Console) -> None:
    stranger = "nobody-here@example.com"
    with console.server.client() as client:
        for _ in range(5):
            assert client.post("/api/login", json={"email": stranger, "password": "guess"}).status_code == 401
    page = console.page(viewport=PHONE)
    page.goto("/login")
    page.get_by_label("E-mail address").fill(stranger)
    page.get_by_label("Password").fill("guess")
    page.get_by_role("button", name="Sign in").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Too many failed sign-ins")
    expect(alert).to_contain_text(re.compile(r"You can try again in 1[45] minutes\."))
    console.shoot(page, "login-throttled-light-phone")


def test_sign_out_returns_to_login_and_the_old_session_stops_working(console: Console) -> None:
    page = console.signed_in()
    page.goto("/sites")
    expect(page.get_by_role("heading", level=1, name="Sites")).to_be_visible()
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    assert cookies, "signing in set no cookie"
    with httpx.Client(verify=TLS, base_url=console.url, cookies=cookies) as copied:
        assert copied.get("/api/me").status_code == 200

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/login\?signed_out=1$"))
    expect(page.get_by_role("status")).to_have_text("You are signed out.")
    with httpx.Client(verify=TLS, base_url=console.url, cookies=cookies) as copied:
        assert copied.get("/api/me").status_code == 401
    page.goto("/health")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fhealth$"))


def test_an_ended_session_sends_the_owner_to_login_and_back_to_the_same_page(console: Console) -> None:
    page = console.signed_in()
    page.goto("/health")
    expect(page.get_by_role("heading", level=1, name="Health")).to_be_visible()
    page.context.clear_cookies()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Sites", exact=True).click()
    expect(page).to_have_url(re.compile(r"/login\?next=%2Fsites$"))
    expect(page.get_by_role("status")).to_have_text("Your session has ended. Sign in to continue.")
    page.get_by_label("E-mail address").fill(OWNER_EMAIL)
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_label("Password").press("Enter")
    expect(page).to_have_url(f"{console.url}/sites")
    expect(page.get_by_role("heading", level=1, name="Sites")).to_be_focused()


def test_login_never_redirects_to_another_site_after_signing_in(console: Console) -> None:
    page = console.page()
    page.goto("/login?next=//evil.example/steal")
    page.get_by_label("E-mail address").fill(OWNER_EMAIL)
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{console.url}/sites")
