"""Autocapture in Chromium, clicks: outbound links (navigation away, Ctrl-click, middle click, links
added after load), file downloads, tagged elements, 404 pages, and when the captures are loaded at
all (snippet attributes, site settings, consent, DNT/GPC, a strict Content-Security-Policy)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from tests.sdk.helpers import Site, Stored, named, open_page, wait_until
from tests.support.browser import plugins_ran
from tests.support.shop import Shop

LINKS = (
    "<h1>Shop</h1>"
    "<a id='out' href='{partner}/docs?token=secret#top'>Partner docs</a> "
    "<a id='blank' target='_blank' href='{partner}/blank'>New tab</a> "
    "<a id='inside' href='/next'>Inside</a> "
    "<a id='pdf' href='/files/price-list.PDF?v=2'>Prices</a> "
    "<a id='saved' download href='/export/data'>Export</a>"
)


@pytest.fixture
def partner() -> Iterator[Shop]:
    """Another site on its own origin, where outbound links lead."""
    other = Shop()
    yield other
    other.close()


def _plugins(page: Page) -> list[str]:
    loaded: list[str] = []
    page.on("request", lambda r: loaded.append(r.url.rsplit("/", 1)[1]) if "/analytics-" in r.url else None)
    return loaded


def test_an_outbound_click_that_leaves_the_page_is_stored_with_the_bare_url(
    page: Page, shop: Shop, partner: Shop, site: Site, stored: Stored
) -> None:
    shop.body = LINKS.format(partner=partner.origin)
    shop.use(site.base_url, site.key, outbound_links="")
    open_page(page, shop.url())
    plugins_ran(page, "outbound-links")
    page.click("#out")  # the page is left at once: only the beacon at pagehide can carry the event
    page.wait_for_url(f"{partner.origin}/docs**")
    [click] = named(stored, "outbound_link")
    assert click.props == {"url": f"{partner.origin}/docs"}
    assert click.path == "/"
    page.wait_for_timeout(500)
    assert [e.name for e in stored.all()] == ["pageview", "outbound_link"]


def test_ctrl_clicks_middle_clicks_and_links_added_after_load_count_and_inside_links_do_not(
    page: Page, shop: Shop, partner: Shop, site: Site, stored: Stored
) -> None:
    site.change(autocapture={"outbound_links": True})  # the site setting, no snippet attribute
    shop.body = LINKS.format(partner=partner.origin)
    open_page(page, shop.url())
    plugins_ran(page, "outbound-links")
    with page.context.expect_page() as opened:
        page.click("#out", modifiers=["Control"])
    opened.value.close()
    with page.context.expect_page() as opened:
        page.click("#blank", button="middle")
    opened.value.close()
    page.evaluate(
        f"""() => {{ const a = document.createElement('a'); a.id = 'late'; a.textContent = 'late';
        a.href = '{partner.origin}/late'; a.target = '_blank'; document.body.append(a); }}"""
    )
    with page.context.expect_page() as opened:
        page.click("#late")
    opened.value.close()
    page.click("#inside")
    page.wait_for_url("**/next")
    clicks = named(stored, "outbound_link", 3)
    assert [c.props["url"] for c in clicks] == [f"{partner.origin}/{p}" for p in ("docs", "blank", "late")]


def test_file_downloads_count_by_extension_or_download_attribute(
    page: Page, shop: Shop, partner: Shop, site: Site, stored: Stored
) -> None:
    shop.body = LINKS.format(partner=partner.origin)
    shop.use(site.base_url, site.key, file_downloads="")
    open_page(page, shop.url())
    plugins_ran(page, "file-downloads")
    page.click("#saved", modifiers=["Control"])
    page.click("#pdf")
    page.wait_for_url("**/files/price-list.PDF?v=2")
    downloads = named(stored, "file_download", 2)
    urls = [d.props["url"] for d in downloads]
    assert urls == [shop.url("/export/data"), shop.url("/files/price-list.PDF")]


def test_the_snippet_s_extension_list_replaces_the_site_s(
    page: Page, shop: Shop, partner: Shop, site: Site, stored: Stored
) -> None:
    site.change(autocapture={"file_downloads": True})
    shop.body = LINKS.format(partner=partner.origin) + "<a id='zip' href='/a.zip'>zip</a>"
    shop.use(site.base_url, site.key, file_downloads="zip")
    open_page(page, shop.url())
    plugins_ran(page, "file-downloads")
    page.click("#pdf", modifiers=["Control"])
    page.click("#zip")
    page.wait_for_url("**/a.zip")
    [download] = named(stored, "file_download")
    assert download.props == {"url": f"{shop.origin}/a.zip"}


def test_tagged_elements_send_their_events_with_props_and_broken_tags_send_nothing(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.body = (
        "<button id='buy' data-analytics-event='buy' data-analytics-prop-plan='pro' "
        "data-analytics-prop-seats='3'><span id='label'>Buy</span></button>"
        "<form id='signup' data-analytics-event='signup' data-analytics-prop-source='footer' "
        "action='/thanks'>"
        "<input name='email'><button id='send'>Send</button></form>"
        f"<button id='broken' data-analytics-event='{'x' * 101}'>Broken</button>"
    )
    warnings: list[str] = []
    page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
    open_page(page, shop.url())
    plugins_ran(page, "tagged")
    page.click("#label")
    page.click("#broken")
    page.fill("input[name=email]", "typed")
    page.click("#send")  # a click inside a tagged form is not the form's event; the submit is
    page.wait_for_url("**/thanks**")
    names = [(e.name, e.props, e.path) for e in stored.wait(4) if e.name != "pageview"]
    assert names == [("buy", {"plan": "pro", "seats": "3"}, "/"), ("signup", {"source": "footer"}, "/")]
    assert any("name must be a string of 1 to 100 characters" in w for w in warnings)


def test_tagged_elements_added_after_load_are_captured(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    loaded = _plugins(page)
    open_page(page, shop.url())
    page.wait_for_timeout(500)
    assert "analytics-tagged.js" not in loaded
    page.evaluate(
        "() => { const b = document.createElement('button'); b.id = 'later';"
        "b.dataset.analyticsEvent = 'later_click'; b.textContent = 'Later'; document.body.append(b); }"
    )
    plugins_ran(page, "tagged")
    page.click("#later")
    [event] = named(stored, "later_click")
    assert event.props == {}


def test_a_page_marked_not_found_sends_one_404_with_its_path_and_referrer(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    shop.pages["/gone"] = "<main data-analytics-404><h1>Not found</h1><a id='home' href='/'>Home</a></main>"
    shop.body = "<a id='broken-link' href='/gone?from=menu'>Old page</a>"
    open_page(page, shop.url())
    page.click("#broken-link")
    page.wait_for_url("**/gone?from=menu")
    page.wait_for_function("() => analytics.status().events === 'ready'")
    [missing] = named(stored, "404")
    assert (missing.path, missing.props) == ("/gone", {"path": "/gone"})
    assert missing.referrer == f"{shop.origin}/"
    # A single-page application reaching a missing route later counts it too.
    page.evaluate(
        "() => { history.pushState({}, '', '/spa-missing');"
        " document.body.setAttribute('data-analytics-404', ''); }"
    )
    found = named(stored, "404", 2)
    assert found[1].props == {"path": "/spa-missing"}


def test_no_capture_is_loaded_before_consent_and_dnt_keeps_engagement_and_heatmaps_off(
    page: Page, shop: Shop, site: Site, stored: Stored
) -> None:
    site.change(autocapture={"engagement": True, "heatmaps": True, "web_vitals": True})
    shop.use(site.base_url, site.key, consent="required", outbound_links="")
    page.add_init_script("Object.defineProperty(Navigator.prototype, 'doNotTrack', {get: () => '1'});")
    loaded = _plugins(page)
    open_page(page, shop.url(), ready=False)
    page.wait_for_timeout(1000)
    assert loaded == []
    page.evaluate("analytics.start()")
    wait_until(page, lambda: {"analytics-outbound-links.js", "analytics-web-vitals.js"} <= set(loaded), 10)
    page.wait_for_timeout(500)
    assert sorted(loaded) == [f"analytics-{n}.js" for n in ("capture", "outbound-links", "web-vitals")]


def test_data_false_on_the_snippet_turns_a_site_setting_off_for_that_page(
    page: Page, shop: Shop, site: Site
) -> None:
    site.change(autocapture={"heatmaps": True, "engagement": True})
    shop.use(site.base_url, site.key, heatmaps="false")
    loaded = _plugins(page)
    open_page(page, shop.url())
    wait_until(page, lambda: "analytics-engagement.js" in loaded, 10)
    page.wait_for_timeout(500)
    assert "analytics-heatmaps.js" not in loaded


def test_captures_work_under_a_strict_content_security_policy(
    page: Page, shop: Shop, partner: Shop, site: Site, stored: Stored
) -> None:
    shop.headers["Content-Security-Policy"] = (
        f"default-src 'none'; script-src {site.base_url}; connect-src {site.base_url}; "
        "style-src 'none'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
    tagged = "<button id='tag' data-analytics-event='tagged'>t</button>"
    shop.body = LINKS.format(partner=partner.origin) + tagged
    shop.use(site.base_url, site.key, outbound_links="", heatmaps="", engagement="", web_vitals="")
    page.add_init_script(
        "window.__violations = []; addEventListener('securitypolicyviolation',"
        " e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI), true);"
    )
    open_page(page, shop.url())
    plugins_ran(page, "outbound-links", "heatmaps", "tagged", "engagement", "web-vitals")
    page.click("#tag")
    assert page.evaluate("window.__violations") == []
    page.click("#out")
    page.wait_for_url(f"{partner.origin}/docs**")
    named(stored, "tagged")
    named(stored, "outbound_link")
    named(stored, "heatmap_click", 2)
    named(stored, "engagement")
