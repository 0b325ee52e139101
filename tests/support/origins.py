"""Loopback web servers for customer sites, each on a port no earlier one of this test run had.

A customer site's domain is ``127.0.0.1:PORT``, and tests of one package share a server and an
owner, who cannot add a second site with the same domain. The kernel may hand a closed server's
port to a later one, so the port alone would not keep domains apart; this module does.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_handed_out: set[int] = set()


def loopback_server(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A threading HTTP server on 127.0.0.1, on a port not handed out before in this process."""
    refused: list[ThreadingHTTPServer] = []
    try:
        while True:
            server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
            port = int(server.server_address[1])
            if port not in _handed_out:
                _handed_out.add(port)
                server.daemon_threads = True
                return server
            refused.append(server)  # held open while retrying, so the kernel picks another port
    finally:
        for server in refused:
            server.server_close()
