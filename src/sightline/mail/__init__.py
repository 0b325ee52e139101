"""E-mail: invitations, weekly and monthly digests per site and member, and traffic-spike notices,
sent through the operator's SMTP server (``--smtp-url``). Nothing is sent without one.

May import: ``reports``, ``imports`` (imported figures for digests), ``teams``, ``sites``,
``database``, ``settings``, ``errors``, ``text`` (one-line subjects), ``jobs`` and ``health``
(its job and the job's health service). Used by
``app`` (the digest job) and ``console``.
"""
