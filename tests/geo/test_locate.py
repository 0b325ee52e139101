"""The place of an address: bundled countries, an operator's database for regions and cities."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sightline.geo import GeoDatabaseError, Locator
from tests.support.geo import LONDON, PARIS, SYDNEY, city_database, flat_database


def test_the_bundled_data_gives_the_country_of_public_addresses() -> None:
    locator = Locator()
    assert locator.locate(LONDON) == ("GB", None, None)
    assert locator.locate("8.8.8.8") == ("US", None, None)
    assert locator.locate(PARIS) == ("FR", None, None)


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "10.1.2.3", "192.168.0.7", "::1", "fe80::1", "unknown", "", None, "1.2.3"]
)
def test_private_reserved_and_malformed_addresses_have_no_place(address: str | None) -> None:
    assert Locator().locate(address) == (None, None, None)


def test_an_operators_city_database_gives_country_region_and_city_in_english(tmp_path: Path) -> None:
    locator = Locator(str(city_database(tmp_path / "city.mmdb")))
    assert locator.locate(LONDON) == ("GB", "England", "London")
    assert locator.locate(PARIS) == ("FR", "Île-de-France", "Paris")
    info = locator.info()
    assert info.city_database == "city.mmdb"
    assert info.city_database_type == "GeoLite2-City"
    assert info.city_database_built_at is not None


def test_the_flat_layout_of_ip_location_db_files_is_read_too(tmp_path: Path) -> None:
    locator = Locator(str(flat_database(tmp_path / "flat.mmdb")))
    assert locator.locate(SYDNEY) == ("AU", "New South Wales", "Sydney")


def test_an_address_the_operators_database_lacks_still_gets_its_bundled_country(tmp_path: Path) -> None:
    locator = Locator(str(city_database(tmp_path / "city.mmdb")))
    assert locator.locate("8.8.8.8") == ("US", None, None)


def test_a_missing_file_is_refused_with_a_message_naming_it(tmp_path: Path) -> None:
    with pytest.raises(GeoDatabaseError, match=r"--geoip-database: .*nothere\.mmdb is not a file"):
        Locator(str(tmp_path / "nothere.mmdb"))


def test_a_file_that_is_not_a_database_is_refused_with_a_message_naming_it(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.mmdb"
    bogus.write_bytes(b"not a database" * 100)
    with pytest.raises(GeoDatabaseError, match=r"bogus\.mmdb is not a MaxMind-format"):
        Locator(str(bogus))


def test_one_lookup_costs_a_few_microseconds(tmp_path: Path) -> None:
    """Once per batch in the writer; measured 1-3 µs here (2 shared cores), bound kept loose."""
    for locator in (Locator(), Locator(str(city_database(tmp_path / "city.mmdb")))):
        started = time.perf_counter()
        for _ in range(2000):
            locator.locate(LONDON)
        per_lookup = (time.perf_counter() - started) / 2000
        assert per_lookup < 200e-6
