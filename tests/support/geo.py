"""Small MaxMind-format databases written for the tests (``mmdb-writer``), in both common layouts."""

from __future__ import annotations

from pathlib import Path

from mmdb_writer import MMDBWriter
from netaddr import IPSet

# Public addresses and what the test databases say about them.
LONDON = "81.2.69.160"  # registered in GB
PARIS = "2a01:e0a:1::1"  # registered in FR
SYDNEY = "1.128.0.1"  # registered in AU


def city_database(path: Path) -> Path:
    """MaxMind's nested City layout (GeoLite2 City, DB-IP City Lite)."""
    writer = MMDBWriter(6, "GeoLite2-City", languages=["en"], description="test", ipv4_compatible=True)
    writer.insert_network(
        IPSet(["81.2.69.0/24"]),
        {
            "country": {"iso_code": "GB", "names": {"en": "United Kingdom"}},
            "subdivisions": [{"iso_code": "ENG", "names": {"en": "England", "de": "England"}}],
            "city": {"names": {"en": "London", "fr": "Londres"}},
        },
    )
    writer.insert_network(
        IPSet(["2a01:e0a::/32"]),
        {
            "country": {"iso_code": "FR", "names": {"en": "France"}},
            "subdivisions": [{"names": {"en": "Île-de-France"}}],
            "city": {"names": {"en": "Paris"}},
        },
    )
    writer.to_db_file(str(path))
    return path


def flat_database(path: Path) -> Path:
    """ip-location-db's flat layout (``country_code``, ``state1``, ``city``)."""
    writer = MMDBWriter(6, "ip-location-db-city", languages=["en"], description="test", ipv4_compatible=True)
    writer.insert_network(
        IPSet(["1.128.0.0/16"]), {"country_code": "AU", "state1": "New South Wales", "city": "Sydney"}
    )
    writer.to_db_file(str(path))
    return path
