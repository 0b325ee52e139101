"""Request bodies of the console API. Unknown fields are refused so that typos do not pass silently."""

from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)


def _valid_unicode(value: str) -> str:
    """JSON may escape lone surrogates (``"\\ud800"``); no database can store them, so refuse them here."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("contains an invalid Unicode character") from None
    return value


Text = Annotated[StrictStr, AfterValidator(_valid_unicode)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(Body):
    email: Annotated[Text, Field(max_length=320)]
    password: Annotated[Text, Field(max_length=1024)]


class SetupBody(Body):
    token: Annotated[Text, Field(max_length=200)]
    email: Annotated[Text, Field(max_length=320)]
    password: Annotated[Text, Field(max_length=1024)]


class SiteCreate(Body):
    name: Text
    domain: Text


class AutocapturePatch(Body):
    """Any of the site's autocapture switches; ``file_download_extensions`` null restores the default list."""

    outbound_links: StrictBool | None = None
    file_downloads: StrictBool | None = None
    engagement: StrictBool | None = None
    web_vitals: StrictBool | None = None
    heatmaps: StrictBool | None = None
    file_download_extensions: (
        Annotated[list[Annotated[Text, Field(max_length=20)]], Field(max_length=50)] | None
    ) = None


class SitePatch(Body):
    name: Text | None = None
    collection_enabled: StrictBool | None = None
    recording_enabled: StrictBool | None = None
    recording_sample_rate: Annotated[StrictFloat, Field(ge=0, le=1, allow_inf_nan=False)] | None = None
    timezone: Annotated[Text, Field(max_length=64)] | None = None
    week_start: Annotated[Text, Field(max_length=20)] | None = None
    cookieless: StrictBool | None = None
    excluded_addresses: (
        Annotated[list[Annotated[Text, Field(max_length=64)]], Field(max_length=100)] | None
    ) = None
    retention_days: Annotated[StrictInt, Field(ge=1, le=36500)] | None = None
    blocked_referrers: (
        Annotated[list[Annotated[Text, Field(max_length=2000)]], Field(max_length=200)] | None
    ) = None
    autocapture: AutocapturePatch | None = None


class EmptyBody(Body):
    """Bodiless actions (logout, retry) accept nothing or ``{}``."""
