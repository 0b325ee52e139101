"""teams: what each API key may do (api_keys.scopes)

Keys made before scopes existed read the reports and the list of their sites, so they get
``stats:read`` and ``sites:read`` (``teams.scopes.LEGACY``) and keep working as they did.

Revision ID: 0022_teams_key_scopes
Revises: 0017_teams_imports
Create Date: 2026-11-27 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_teams_key_scopes"
down_revision = "0017_teams_imports"
branch_labels = None
depends_on = None

LEGACY = ["stats:read", "sites:read"]


def upgrade() -> None:
    op.add_column("api_keys", sa.Column("scopes", sa.JSON(), nullable=True))
    keys = sa.table("api_keys", sa.column("scopes", sa.JSON()))
    op.execute(keys.update().values(scopes=LEGACY))
    with op.batch_alter_table("api_keys") as batch:
        batch.alter_column("scopes", existing_type=sa.JSON(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("scopes")
