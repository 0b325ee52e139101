"""Request bodies of the console API. Unknown fields are refused so that typos do not pass silently."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictStr


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(Body):
    email: Annotated[StrictStr, Field(max_length=320)]
    password: Annotated[StrictStr, Field(max_length=1024)]


class SetupBody(Body):
    token: Annotated[StrictStr, Field(max_length=200)]
    email: Annotated[StrictStr, Field(max_length=320)]
    password: Annotated[StrictStr, Field(max_length=1024)]


class SiteCreate(Body):
    name: StrictStr
    domain: StrictStr


class SitePatch(Body):
    name: StrictStr | None = None
    collection_enabled: StrictBool | None = None
    recording_enabled: StrictBool | None = None
    recording_sample_rate: Annotated[StrictFloat, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    timezone: Annotated[StrictStr, Field(max_length=64)] | None = None


class EmptyBody(Body):
    """Bodiless actions (logout, retry) accept nothing or ``{}``."""
