"""pandas as a Sightline server installed by its users finds it: absent (see tests/support/server.py).

The tests' environment has pandas only for chDB. In a server that finds it, pyarrow imports it at its
first array: 0.2 s of CPU in every store process, which never uses it.
"""

raise ImportError("pandas is not among Sightline's dependencies (the tests install it for chDB)")
