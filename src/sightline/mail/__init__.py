"""E-mail: invitations, weekly and monthly digests per site and member, and traffic-spike notices,
sent through the operator's SMTP server (``--smtp-url``). Nothing is sent without one.

``feature`` plugs the job into the server (``sightline.features``).

May import: ``reports``, ``imports`` (imported figures for digests), ``teams``, ``sites``,
``database``, ``settings``, ``errors``, ``text`` (one-line subjects), ``jobs``, ``health`` (the
job's health service), ``features``. Used by ``wiring`` (the job), ``context`` (the sender),
``console`` and ``web``.
"""
