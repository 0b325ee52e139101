"""Teams: members of an owner's team, invitations, API keys for the stats API, shared dashboards.

A user without a ``members`` row owns a team of their own (their sites carry their id as
``owner_id``); a member's row names the owner whose sites they work on (``team_id``).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Table,
    UniqueConstraint,
)

from sightline.database.metadata import metadata
from sightline.database.types import UTCDateTime

members = Table(
    "members",
    metadata,
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("team_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("role", String(16), nullable=False),
    # Site ids a viewer may read; NULL: every site of the team.
    Column("site_ids", JSON, nullable=True),
    Column("invited_by", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
)

invitations = Table(
    "invitations",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("email", String(320), nullable=False),
    Column("role", String(16), nullable=False),
    Column("site_ids", JSON, nullable=True),
    Column("token_hash", LargeBinary(32), nullable=False, unique=True),
    Column("invited_by", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("team_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("name", String(100), nullable=False),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=True),
    # What the key may do: a JSON list of ``teams.scopes`` names (migration 0022_teams_key_scopes).
    Column("scopes", JSON, nullable=False),
    Column("key_hash", LargeBinary(32), nullable=False, unique=True),
    # The first characters of the key, shown in lists so an owner can tell keys apart.
    Column("prefix", String(16), nullable=False),
    Column("created_by", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_used_at", UTCDateTime, nullable=True),
)

shares = Table(
    "shares",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False, index=True),
    # The link's secret; kept (not hashed) so the console can show the link again.
    Column("token", String(64), nullable=False, unique=True),
    Column("password_hash", String(200), nullable=True),
    Column("created_by", Integer, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_viewed_at", UTCDateTime, nullable=True),
)

# One row per e-mail sent (or being sent) per site, kind, period and recipient: a digest or notice
# goes out once, however often the job runs and on however many nodes (migration 0015_teams_mail).
mail_log = Table(
    "mail_log",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("period", String(40), nullable=False),  # "weekly:2026-11-16", "spike:2026-11-23", ...
    Column("recipient", String(320), nullable=False),
    Column("sent_at", UTCDateTime, nullable=False),
    UniqueConstraint("site_id", "period", "recipient", name="uq_mail_log_site_id"),
)

# A member's choice to receive a site's e-mails (digests and notices), and the secret of the
# one-click unsubscribe link every such e-mail carries (kept, not hashed: each e-mail shows it).
# No row: subscribed (migration 0017_teams_imports).
mail_subscriptions = Table(
    "mail_subscriptions",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("site_id", Integer, ForeignKey("sites.id", ondelete="CASCADE"), nullable=False),
    Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
    Column("token", String(64), nullable=False, unique=True),
    Column("enabled", Boolean, nullable=False),
    Column("changed_at", UTCDateTime, nullable=False),
    UniqueConstraint("site_id", "user_id", name="uq_mail_subscriptions_site_id"),
)
