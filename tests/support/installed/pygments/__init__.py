"""Pygments as a Sightline server installed by its users finds it: absent (see tests/support/server.py).

The tests' environment has Pygments only for pytest and Schemathesis. In a server that finds it, Mako
(Alembic's templates) loads its lexers when the server migrates its database: 0.07 s of CPU per start.
"""

raise ImportError("Pygments is not among Sightline's dependencies (the tests install it for pytest)")
