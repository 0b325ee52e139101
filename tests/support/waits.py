"""How long tests wait for what must happen sooner or later: a server to answer, a command to end.

The suite runs in parallel workers on machines with two cores, where a server that starts in two
seconds alone may take a minute. These limits only decide how soon a real failure is reported,
never whether a test passes, so they are generous; pytest-timeout still ends a test after 300 s.
"""

from __future__ import annotations

START = 180.0  # a server process (Sightline, PostgreSQL) to start answering
COMMAND = 180.0  # a command-line run (create-owner, migrate, retention) to finish
STOP = 30.0  # a process to exit once asked to
EVENTUALLY = 60.0  # a background effect (a job, a queue draining) to show
