"""Who receives a site's e-mails, and the one-click way out.

Every digest and notice goes to the owner and each member who may read the site, unless they
turned that site's e-mails off. Each e-mail carries the recipient's unsubscribe link for the site
(``/unsubscribe/{token}``, also in the ``List-Unsubscribe`` header with ``List-Unsubscribe-Post``
for mail clients' one-click button, RFC 8058), which works without signing in; the member turns
them on again in the console (``PUT /api/sites/{id}/email-reports/subscription``). The token is a
random secret per member and site, made the first time an e-mail is sent to them.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, insert, select, update

from sightline.database.schema import mail_subscriptions, members, sites, users
from sightline.database.types import utcnow


@dataclass(frozen=True)
class Recipient:
    user_id: int
    email: str
    token: str  # the member's unsubscribe token for the site

    def unsubscribe_url(self, console_url: str) -> str:
        return f"{console_url}/unsubscribe/{self.token}"


def _row(conn: Connection, site_id: int, user_id: int) -> Any:
    return conn.execute(
        select(mail_subscriptions).where(
            mail_subscriptions.c.site_id == site_id, mail_subscriptions.c.user_id == user_id
        )
    ).first()


def subscription(conn: Connection, site_id: int, user_id: int) -> tuple[str, bool]:
    """(the member's unsubscribe token for the site, whether they receive its e-mails); makes the
    token the first time."""
    row = _row(conn, site_id, user_id)
    if row is None:
        token = secrets.token_urlsafe(32)
        conn.execute(
            insert(mail_subscriptions).values(
                site_id=site_id, user_id=user_id, token=token, enabled=True, changed_at=utcnow()
            )
        )
        return token, True
    return str(row.token), bool(row.enabled)


def set_enabled(conn: Connection, site_id: int, user_id: int, enabled: bool) -> None:
    subscription(conn, site_id, user_id)
    conn.execute(
        update(mail_subscriptions)
        .where(mail_subscriptions.c.site_id == site_id, mail_subscriptions.c.user_id == user_id)
        .values(enabled=enabled, changed_at=utcnow())
    )


def by_token(conn: Connection, token: str) -> Any:
    """The subscription an unsubscribe link names, with the site's name; None for an unknown link."""
    if not token or len(token) > 64:
        return None
    return conn.execute(
        select(mail_subscriptions, users.c.email, sites.c.name.label("site_name"))
        .join(users, users.c.id == mail_subscriptions.c.user_id)
        .join(sites, sites.c.id == mail_subscriptions.c.site_id)
        .where(mail_subscriptions.c.token == token)
    ).first()


def readers(conn: Connection, site: Any) -> list[tuple[int, str]]:
    """(user id, e-mail) of the owner and every member who may read ``site``."""
    owner = conn.execute(select(users.c.id, users.c.email).where(users.c.id == site["owner_id"])).one()
    found = [(int(owner.id), str(owner.email))]
    rows = conn.execute(
        select(users.c.id, users.c.email, members.c.role, members.c.site_ids)
        .join(members, members.c.user_id == users.c.id)
        .where(members.c.team_id == site["owner_id"])
        .order_by(users.c.id)
    )
    for row in rows:
        if row.role != "viewer" or row.site_ids is None or site["id"] in row.site_ids:
            found.append((int(row.id), str(row.email)))
    return found


def recipients(conn: Connection, site: Any) -> list[Recipient]:
    """The readers of ``site`` who receive its e-mails, each with their unsubscribe token."""
    out = []
    for user_id, email in readers(conn, site):
        token, enabled = subscription(conn, int(site["id"]), user_id)
        if enabled:
            out.append(Recipient(user_id, email, token))
    return out
