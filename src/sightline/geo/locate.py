"""``Locator.locate(address)``: the (country, region, city) of a client address, or NULLs.

Used once per batch of events (a batch comes from one client), in ingest's writer process.
The bundled country lookup costs about 1 µs; a MaxMind-format database a few µs more.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import iptocc
import maxminddb

Place = tuple[str | None, str | None, str | None]  # (ISO 3166-1 alpha-2 country, region, city)
NOWHERE: Place = (None, None, None)
MAX_NAME = 100  # region and city names are cut to the column's width
NOT_A_COUNTRY = frozenset({"ZZ", "XX", "EU", "AP"})  # "unknown" and the RIRs' regional blocks


class GeoDatabaseError(ValueError):
    """The operator's database cannot be used; the message says why and names the file."""


@dataclass(frozen=True, slots=True)
class DatabaseInfo:
    """What health shows about the databases (never a path's contents, never an address)."""

    country_source: str
    country_data_version: str
    city_database: str | None
    city_database_type: str | None
    city_database_built_at: str | None


def open_city_database(path: str) -> maxminddb.Reader:
    """Open an operator's MaxMind-format file, or raise GeoDatabaseError naming it."""
    file = Path(path)
    if not file.is_file():
        raise GeoDatabaseError(f"--geoip-database: {path} is not a file")
    try:
        return maxminddb.open_database(str(file), maxminddb.MODE_AUTO)
    except (OSError, ValueError, maxminddb.InvalidDatabaseError) as exc:
        raise GeoDatabaseError(
            f"--geoip-database: {path} is not a MaxMind-format (.mmdb) database ({type(exc).__name__})"
        ) from None


class Locator:
    """Country from the bundled data; region and city (and a better country) from ``city_database``."""

    def __init__(self, city_database: str | None = None) -> None:
        self.path = city_database
        self.reader: maxminddb.Reader | None = open_city_database(city_database) if city_database else None

    def locate(self, address: str | None) -> Place:
        """Where ``address`` is; (None, None, None) for private, reserved or unknown addresses.

        ``address`` is normalised text (``sightline.clientaddr``); it is not parsed again here:
        the bundled lookup answers None for anything that is not a public address, and an
        operator's database holds public networks only.
        """
        if not address:
            return NOWHERE
        country = _country(iptocc.country_code(address))
        if self.reader is None:
            return (country, None, None) if country else NOWHERE
        try:
            record = self.reader.get(address)
        except ValueError:  # not an address at all
            return NOWHERE
        except maxminddb.InvalidDatabaseError:
            record = None
        if not isinstance(record, dict):
            return (country, None, None) if country else NOWHERE
        found, region, city = _from_record(record)
        return found or country, region, city

    def info(self) -> DatabaseInfo:
        built = type_name = None
        if self.reader is not None:
            meta = self.reader.metadata()
            type_name = str(meta.database_type)
            built = datetime.fromtimestamp(int(meta.build_epoch), UTC).isoformat()
        return DatabaseInfo(
            country_source="iptocc (Regional Internet Registries' delegation data)",
            country_data_version=_version("iptocc"),
            city_database=Path(self.path).name if self.path else None,
            city_database_type=type_name,
            city_database_built_at=built,
        )

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()
            self.reader = None


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def _country(code: Any) -> str | None:
    if not isinstance(code, str) or len(code) != 2 or not code.isascii() or not code.isalpha():
        return None
    code = code.upper()
    return None if code in NOT_A_COUNTRY else code


def _name(value: Any) -> str | None:
    """A name from a MaxMind ``names`` map (English first) or a plain string."""
    if isinstance(value, dict):
        names = value.get("names")
        if isinstance(names, dict):
            value = names.get("en") or next((v for v in names.values() if isinstance(v, str)), None)
        else:
            value = None
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:MAX_NAME]


def _from_record(record: dict[str, Any]) -> Place:
    """The place in a record of either common layout: MaxMind's nested one (GeoLite2, DB-IP),
    or the flat one of ip-location-db's files (``country_code``, ``state1``, ``city``)."""
    country_field = record.get("country") or record.get("registered_country")
    if isinstance(country_field, dict):
        country = _country(country_field.get("iso_code"))
    else:
        country = _country(record.get("country_code"))
    subdivisions = record.get("subdivisions")
    if isinstance(subdivisions, list) and subdivisions:
        region = _name(subdivisions[0])
    else:
        region = _name(record.get("state1"))
    return country, region, _name(record.get("city"))
