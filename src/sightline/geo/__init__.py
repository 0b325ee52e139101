"""Geography: which country (and, with an operator's database, region and city) an address is in.

Countries come from ``iptocc`` (a PyPI package whose wheel embeds the five Regional Internet
Registries' delegation data, rebuilt nightly); ``--geoip-database PATH`` adds an operator's
MaxMind-format file (GeoLite2 City, DB-IP City Lite, ...) for regions and cities, read with
``maxminddb``. Addresses are looked up in memory and forgotten: nothing here stores, caches or
logs one. Imports nothing from the rest of Sightline.
"""

from sightline.geo.locate import GeoDatabaseError, Locator, Place

__all__ = ["GeoDatabaseError", "Locator", "Place"]
