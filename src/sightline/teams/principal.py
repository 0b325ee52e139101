"""Who a console request acts as: the member, their role, their team and the sites they may read.

A user without a ``members`` row is the owner of their own team. A member works on the sites of
the team's owner (``team_id``); a viewer may be limited to some of them (``site_ids``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select

from sightline.database.schema import members

ROLES = ("owner", "admin", "viewer")


@dataclass(frozen=True)
class Principal:
    user_id: int
    email: str
    created_at: datetime | None
    role: str
    team_id: int
    # Sites a viewer may read; None: every site of the team.
    site_ids: frozenset[int] | None = None
    # The API key the request came with, else None; what that key may do (``teams.scopes``).
    key_id: int | None = None
    scopes: frozenset[str] = frozenset()

    @property
    def id(self) -> int:
        """The account whose data the request works on (sites belong to the team's owner)."""
        return self.team_id

    def may_read_site(self, site_id: int) -> bool:
        return self.site_ids is None or site_id in self.site_ids

    @property
    def is_admin(self) -> bool:
        return self.role in ("owner", "admin")

    def public(self) -> dict[str, Any]:
        return {
            "id": self.user_id,
            "email": self.email,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "role": self.role,
        }


def site_set(value: Iterable[int] | None) -> frozenset[int] | None:
    return None if value is None else frozenset(int(v) for v in value)


def principal_for(conn: Connection, user: Any) -> Principal:
    """The principal of a signed-in user row (``id``, ``email``, ``created_at``)."""
    row = conn.execute(
        select(members.c.team_id, members.c.role, members.c.site_ids).where(members.c.user_id == user.id)
    ).first()
    if row is None:
        return Principal(user.id, user.email, user.created_at, "owner", user.id)
    sites = site_set(row.site_ids) if row.role == "viewer" else None
    return Principal(user.id, user.email, user.created_at, row.role, row.team_id, sites)
