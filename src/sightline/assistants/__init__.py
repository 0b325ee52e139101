"""Analytics an assistant can read: the stats API as Model Context Protocol tools.

``tools`` declares the tools (list_sites, summary, timeseries, breakdown, goals, funnel, realtime)
on the official ``mcp`` SDK's ``MCPServer``; each tool is one call of the stats API, made with the
caller's API key, so its answer is the figures the console shows, limited to the key's sites.
``stats`` is that call. ``endpoint`` serves the tools over HTTP at ``/mcp`` inside the server
(the calls go to the application itself, in process); ``sightline mcp`` serves them over stdio
for a local assistant, calling a running server's stats API over HTTP; ``feature`` plugs the
endpoint into the server (``sightline.features``). May import ``sightline.teams`` (key checks),
``sightline.database``, ``sightline.errors``, ``sightline.features`` and the registry of
dimensions (``sightline.dimensions``, ``sightline.channels``); never
``console``, ``ingest``, ``reports`` or ``store``: it reads figures only through the API.
"""
