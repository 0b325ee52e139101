"""One TLS context for every HTTP client the tests make.

httpx builds a new ``ssl.SSLContext`` for each client it is not given one, loading the CA bundle:
about 55 ms of CPU per client (and per ``httpx.get``), which the suite paid thousands of times
over for clients that only ever talk plain HTTP to loopback servers. A client made with
``verify=TLS`` shares this one instead (a quarter of a millisecond).
"""

from __future__ import annotations

import ssl

TLS = ssl.create_default_context()
