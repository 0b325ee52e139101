"""The Locations panel in real Chromium: countries by name, shaded on the bundled world map,
regions and cities, at desktop and phone width in both themes; countries too small for the map;
and the map's lazily loaded chunk within its size budget."""

from __future__ import annotations

import gzip
import json
import re
from datetime import datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.reports import helpers
from tests.support.axe import assert_accessible
from tests.support.browser import STATIC, ensure_built
from tests.support.server import LiveServer
from tests.web.conftest import Console, unique

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
# (country, region, city, visitors)
Place = tuple[str, str | None, str | None, int]
PLACES: list[Place] = [
    ("GB", "England", "London", 6),
    ("FR", "Île-de-France", "Paris", 3),
    ("JP", None, None, 1),
]
# Countries that Natural Earth's 1:110 million outlines leave out, and one it draws.
SMALL: list[Place] = [("SG", None, "Singapore", 4), ("MT", None, "Valletta", 2), ("FR", None, "Paris", 1)]
# The map's lazily loaded chunk (outlines, decoder, projection, component), gzipped.
MAP_BUDGET = 100 * 1024


@pytest.fixture(scope="module")
def located(console_server: LiveServer) -> int:
    """A site with visitors from three countries today."""
    return _site_with_visitors(console_server, "World shop", PLACES)


@pytest.fixture(scope="module")
def islands(console_server: LiveServer) -> int:
    """A site whose visitors come mostly from countries too small for the map."""
    return _site_with_visitors(console_server, "Island shop", SMALL)


def _site_with_visitors(console_server: LiveServer, name: str, places: list[Place]) -> int:
    """A new site with ``places``' visitors in the last hour (or since midnight)."""

    def rows(site_id: int, start: datetime) -> list[dict[str, Any]]:
        return [
            helpers.pageview(site_id, start + timedelta(seconds=i), f"{country}-{i}", "/").row()
            | {"country": country, "region": region, "city": city}
            for country, region, city, count in places
            for i in range(count)
        ]

    return helpers.site_with_rows(console_server, name, unique("world") + ".example.com", rows)


def test_countries_are_named_in_the_table_and_shaded_on_the_world_map(console: Console, located: int) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{located}/reports?range=today")
    table = tab.locator('.report-panel table[data-dimension="country"]')
    expect(table.locator("tbody tr")).to_have_count(3)
    expect(table.locator("tbody tr").first.locator("th")).to_contain_text("United Kingdom")
    world = tab.get_by_role("img", name="Map of visitors by country: 3 countries")
    expect(world).to_be_visible()
    shades = tab.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('.world-map path')]"
        ".map(p => [p.querySelector('title').textContent.split(':')[0],"
        " [...p.classList].find(c => c.startsWith('map-step-'))])"
        ".filter(([, step]) => step !== 'map-step-0'))"
    )
    assert shades == {"United Kingdom": "map-step-5", "France": "map-step-3", "Japan": "map-step-1"}
    panel = tab.locator(".report-panel", has=tab.get_by_role("heading", name="Locations"))
    panel.get_by_role("button", name="Cities").click()
    cities = tab.locator('.report-panel table[data-dimension="city"]')
    expect(cities.locator("tbody tr").first.locator("th")).to_contain_text("London")
    panel.get_by_role("button", name="Regions").click()
    expect(tab.locator('.report-panel table[data-dimension="region"]')).to_contain_text("Île-de-France")


def test_a_click_on_a_country_of_the_map_or_a_place_of_the_tables_filters_the_dashboard(
    console: Console, located: int
) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{located}/reports?range=today")
    expect(tab.get_by_role("img", name="Map of visitors by country: 3 countries")).to_be_visible()
    tab.locator('.world-map path[data-country="FR"]').click()
    expect(tab).to_have_url(re.compile(r"country=FR"))
    expect(tab.locator(".filter-chip")).to_contain_text("Country is France")
    table = tab.locator('.report-panel table[data-dimension="country"]')
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table.locator("tbody tr").first.locator("th")).to_contain_text("France")
    # The map asks for its countries itself: it follows the filter once its own answer is in.
    expect(tab.get_by_role("img", name="Map of visitors by country: 1 country")).to_be_visible()
    expect(tab.locator('.world-map path[data-country="JP"]')).to_have_class("map-step-0")
    tab.locator(".filter-chip").get_by_role("button").click()
    expect(table.locator("tbody tr")).to_have_count(3)
    panel = tab.locator(".report-panel", has=tab.get_by_role("heading", name="Locations"))
    panel.get_by_role("button", name="Cities").click()
    cities = tab.locator('.report-panel table[data-dimension="city"]')
    cities.get_by_role("button", name=re.compile("London")).click()
    expect(tab).to_have_url(re.compile(r"city=London"))
    # The map still shows the last answer's countries until London's are in.
    expect(tab.locator(".world-map")).not_to_have_attribute("aria-busy", "true")
    expect(tab.get_by_role("img", name="Map of visitors by country: 1 country")).to_be_visible()
    # An unshaded country is no filter: nobody came from there.
    expect(tab.locator('.world-map path[data-country="DE"]')).to_have_class("map-step-0")


def test_the_countries_details_are_searched_by_the_names_the_owner_reads(
    console: Console, located: int
) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{located}/reports?range=today")
    tab.get_by_role("button", name="Details: all countries").click()
    dialog = tab.get_by_role("dialog")
    for text, country in (("Fran", "France"), ("united", "United Kingdom"), ("jp", "Japan")):
        dialog.get_by_label("Search").fill(text)
        expect(dialog.locator("tbody tr")).to_have_count(1)
        expect(dialog.locator("tbody tr").first).to_contain_text(country)
    dialog.get_by_label("Search").fill("Atlantis")
    expect(dialog.get_by_text('Nothing matches "Atlantis".')).to_be_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_map_fits_the_screen_in_both_themes(
    console: Console, located: int, scheme: str, size: str
) -> None:
    tab = console.signed_in(scheme=scheme, viewport=SIZES[size])
    tab.goto(f"/sites/{located}/reports?range=today")
    expect(tab.get_by_role("img", name="Map of visitors by country: 3 countries")).to_be_visible()
    width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    tab.get_by_role("heading", name="Locations").scroll_into_view_if_needed()
    console.shoot(tab, f"locations-{scheme}-{size}")
    assert_accessible(tab, f"the Locations panel ({scheme}, {size})")


def test_every_country_of_the_map_is_one_shape_named_by_its_iso_code(console: Console, located: int) -> None:
    tab = console.signed_in()
    tab.goto(f"/sites/{located}/reports?range=today")
    expect(tab.get_by_role("img", name="Map of visitors by country: 3 countries")).to_be_visible()
    codes = tab.evaluate(
        "() => [...document.querySelectorAll('.world-map path')].map(p => p.dataset.country)"
    )
    assert len(codes) == len(set(codes)) > 170
    assert all(re.fullmatch("[A-Z]{2}", code) for code in codes), codes
    # Natural Earth gives Kosovo, Northern Cyprus and Somaliland no numeric code; the latter two join
    # their countries as IP databases place them. French Guiana (GF to IP databases) is drawn apart
    # from France. Antarctica is left out.
    assert {"FR", "GF", "NO", "XK", "CY", "SO", "GB", "US", "CN", "RU", "BR", "AU", "ZA", "IN"} <= set(codes)
    assert "AQ" not in codes
    titles = tab.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('.world-map path')]"
        ".map(p => [p.dataset.country, p.querySelector('title').textContent]))"
    )
    assert titles["NO"] == "Norway: 0 visitors"
    assert titles["XK"] == "Kosovo: 0 visitors"
    assert titles["FR"] == "France: 3 visitors"


def test_countries_too_small_for_the_map_are_named_under_it_and_filter_from_the_table(
    console: Console, islands: int
) -> None:
    tab = console.signed_in(viewport=SIZES["phone"])
    tab.goto(f"/sites/{islands}/reports?range=today")
    world = tab.get_by_role("img", name="Map of visitors by country: 3 countries")
    expect(world).to_be_visible()
    caption = tab.locator(".world-map figcaption")
    expect(caption).to_contain_text("Too small for this map: Singapore, Malta (in the table).")
    assert tab.locator('.world-map path[data-country="SG"]').count() == 0
    assert tab.locator('.world-map path[data-country="FR"]').get_attribute("class") == "map-step-2 map-filter"
    table = tab.locator('.report-panel table[data-dimension="country"]')
    expect(table.locator("tbody tr").first.locator("th")).to_contain_text("Singapore")
    table.get_by_role("button", name=re.compile("Singapore")).click()
    expect(tab).to_have_url(re.compile(r"country=SG"))
    expect(tab.get_by_role("img", name="Map of visitors by country: 1 country")).to_be_visible()
    expect(caption).to_contain_text("Too small for this map: Singapore (in the table).")
    expect(table.locator("tbody tr")).to_have_count(1)
    shaded = tab.evaluate(
        "() => [...document.querySelectorAll('.world-map path')]"
        ".filter(p => !p.classList.contains('map-step-0')).length"
    )
    assert shaded == 0
    expect(tab.locator(".report-panel [role=alert]")).to_have_count(0)
    width, viewport = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= viewport
    assert_accessible(tab, "the Locations panel with countries too small for the map")


def test_the_map_chunk_stays_under_100_kib_gzipped() -> None:
    ensure_built("ui")
    console_dir = STATIC / "console"
    chunks = [p for p in console_dir.glob("chunk-*.js") if "Map of visitors by country" in p.read_text()]
    assert len(chunks) == 1, chunks
    source = chunks[0].read_text("utf-8")
    assert '"Topology"' in source, "the outlines are not in the map's chunk"
    preloaded = json.loads((console_dir / "manifest.json").read_text("utf-8"))["preload"]
    assert chunks[0].name not in preloaded, "the map's chunk loads with the console's first page"
    size = len(gzip.compress(chunks[0].read_bytes(), compresslevel=9))
    assert size <= MAP_BUDGET, f"the map's chunk is {size:,} bytes gzipped; the budget is {MAP_BUDGET:,}"
