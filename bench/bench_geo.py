"""Geography and cookieless codes on ingest's hot path: the cost per event of each step.

For ``BENCH_GEO_EVENTS`` (default 200,000) random public IPv4 and IPv6 addresses:

1. **Country** from the bundled data (``iptocc``), as every server does.
2. **Country, region and city** with an operator's MaxMind-format database (``--geoip-database``):
   a City database written here with 2,000 networks (mmdb-writer); a real GeoLite2 City file is
   larger, and maxminddb's lookup cost grows with the depth of its tree, not its size.
3. **A cookieless visitor code**: the keyed hash of the day's salt, the site, the address and the
   user agent (``sightline.visitors.codes.visitor_code``).

Reported: microseconds per event (median of ``BENCH_REPEAT`` passes, default 5), one core.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mmdb_writer import MMDBWriter
from netaddr import IPSet

from sightline.geo.locate import Locator
from sightline.visitors.codes import visitor_code

AGENT = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"


def addresses(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for index in range(count):
        if index % 5 == 4:
            out.append(
                f"2a01:{rng.randrange(0x100, 0xFFFF):x}:{rng.randrange(0xFFFF):x}::{rng.randrange(0xFFFF):x}"
            )
        else:
            out.append(
                f"{rng.randrange(1, 223)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
            )
    return out


def city_database(path: Path, networks: int = 2000, seed: int = 3) -> Path:
    rng = random.Random(seed)
    writer = MMDBWriter(6, "GeoLite2-City", languages=["en"], description="bench", ipv4_compatible=True)
    for number in range(networks):
        network = f"{rng.randrange(1, 223)}.{rng.randrange(256)}.0.0/16"
        writer.insert_network(
            IPSet([network]),
            {
                "country": {"iso_code": "GB", "names": {"en": "United Kingdom"}},
                "subdivisions": [{"iso_code": "ENG", "names": {"en": "England"}}],
                "city": {"names": {"en": f"City {number}"}},
            },
        )
    writer.to_db_file(str(path))
    return path


def per_event(step: Callable[[str], object], items: list[str], repeat: int) -> float:
    """Median microseconds per item over ``repeat`` passes."""
    passes = []
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            step(item)
        passes.append((time.perf_counter() - start) / len(items) * 1e6)
    return statistics.median(passes)


def main() -> int:
    count = int(os.environ.get("BENCH_GEO_EVENTS", "200000"))
    repeat = int(os.environ.get("BENCH_REPEAT", "5"))
    items = addresses(count)
    bundled = Locator()
    found = sum(1 for a in items[:10000] if bundled.locate(a)[0])
    print(f"  {count:,} addresses ({found / 100:.0f} % of the first 10,000 have a country)")
    print(f"  country (bundled data):           {per_event(bundled.locate, items, repeat):6.2f} us/event")
    with tempfile.TemporaryDirectory() as scratch:
        database = city_database(Path(scratch) / "city.mmdb")
        with_city = Locator(str(database))
        try:
            cost = per_event(with_city.locate, items, repeat)
            print(f"  country, region, city (mmdb):     {cost:6.2f} us/event")
        finally:
            with_city.close()
    salt = os.urandom(32)
    cost = per_event(lambda address: visitor_code(salt, 1, address, AGENT), items, repeat)
    print(f"  cookieless visitor code:          {cost:6.2f} us/event")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
