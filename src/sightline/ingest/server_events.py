"""``POST /api/events``: events from a backend, an app or an e-mail tool, with an API key.

The body is the SDK's batch (``batch_id``, ``events``, optional ``sent_at``; PROTOCOL.md) without
the site key, plus an optional ``client: {address, user_agent}``: the visitor's address (for the
place, and the site's excluded addresses and floods) and user agent (for browser, OS and device,
and the bot check), both in memory only, never stored. The key (``Authorization: Bearer``) must
have the ``events:write`` scope and be made for one site (``teams.scopes``, ``teams.keys``); the
batch then runs through the SDK's own pipeline (``Job.keyed``: the key stands in for the Origin
check), so the limits, drop reasons, group commit and ``batch_id`` idempotency are the SDK's.

Checks in the console's order: 401 (no key, unknown key) -> 415 (not JSON) -> 413 (over the
SDK's 64 KiB) -> 403 ``forbidden`` (scope, site) -> the pipeline's 400/422/403/429/503/507.
There is no Origin check: a browser never sends a key by itself. Answers 202 ``{"accepted": N}``
once the batch is durable (also for a repeated ``batch_id``, which stores nothing again, and for
a batch dropped as a bot's, spam or an excluded address, as ingest answers them).
"""

from __future__ import annotations

import re
from typing import Annotated

import msgspec
import orjson
from anyio import to_thread
from msgspec import Meta, Raw, Struct
from starlette.types import Receive, Scope, Send

from sightline.clientaddr import parse_address
from sightline.database import Database
from sightline.ingest.batch import MAX_BODY
from sightline.ingest.http import ClientGoneError, TooLargeError, answer, error_payload, read_body
from sightline.ingest.pipeline import RETRY_AFTER_SECONDS, DropError, Job, Pipeline
from sightline.numbers import ascii_int
from sightline.teams import keys
from sightline.teams.principal import Principal
from sightline.teams.scopes import EVENTS_ROUTE, ROUTE_SCOPES

PATH = EVENTS_ROUTE[1]
SCOPE = ROUTE_SCOPES[EVENTS_ROUTE]  # events:write
HOW = "Authorization: Bearer KEY"
MAX_USER_AGENT = 1000


class Client(Struct, frozen=True):
    address: Annotated[str, Meta(max_length=64)] | None = None
    user_agent: Annotated[str, Meta(max_length=MAX_USER_AGENT)] | None = None


class ServerBatch(Struct, frozen=True):
    """The parts of the body this endpoint reads; ``batch_id`` and ``events`` are passed on as
    sent, for the pipeline to check as it checks the SDK's."""

    batch_id: Raw = Raw(b"")  # empty: not given
    events: Raw = Raw(b"")
    sent_at: Raw = Raw(b"")
    client: Client | None = None


_DECODER = msgspec.json.Decoder(ServerBatch)
_AT = re.compile(r" - at `\$\.(?P<path>[a-z_.]+)`\Z")
# Refusals made before the pipeline, counted under the pipeline's drop reasons as ingest counts them.
_REASONS = {
    "body_too_large": "body_too_large",
    "malformed_json": "malformed_json",
    "invalid_field": "invalid",
    "invalid_body": "invalid",
}


class RefusedError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


class ServerEventsEndpoint:
    def __init__(self, pipeline: Pipeline, db: Database) -> None:
        self.pipeline = pipeline
        self.db = db

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            payload = error_payload("method_not_allowed", "This address accepts POST only.")
            await answer(send, 405, payload, [(b"allow", b"POST")])
            return
        try:
            job = await self.job(scope, receive)
            await self.pipeline.run(job)
        except ClientGoneError:
            return
        except RefusedError as refused:
            if refused.code in _REASONS:
                self.pipeline.dropped[_REASONS[refused.code]] += 1
            await answer(send, refused.status, error_payload(refused.code, refused.message, refused.field))
            return
        except DropError as drop:
            if drop.status == 202:  # a bot, spam, an excluded address: answered as a stored batch
                assert job.batch is not None
                await answer(send, 202, {"accepted": len(job.batch.events)})
                return
            retry = [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())]
            if drop.status not in (429, 503, 507):
                retry = []
            await answer(send, drop.status, error_payload(drop.code, drop.message, drop.field), retry)
            return
        assert job.batch is not None
        await answer(send, 202, {"accepted": len(job.batch.events)})

    async def job(self, scope: Scope, receive: Receive) -> Job:
        """The request's batch as the pipeline takes it, after the key, type, size and scope checks."""
        headers = {name: value for name, value in scope["headers"]}
        raw_key = headers.get(b"authorization", b"")
        if raw_key[:7].lower() != b"bearer " or not raw_key[7:].strip():
            raise RefusedError(401, "not_signed_in", f"Send an API key with the {SCOPE} scope: {HOW}.")
        who, site_key = await to_thread.run_sync(self._key, raw_key[7:].strip().decode("latin-1"))
        media_type = headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()
        if media_type != b"application/json":
            raise RefusedError(
                415, "unsupported_media_type", "Send the body as JSON with Content-Type: application/json."
            )
        length = headers.get(b"content-length")
        too_large = RefusedError(413, "body_too_large", f"The request body is larger than {MAX_BODY} bytes.")
        if length is not None and ascii_int(length, 0, MAX_BODY) is None:
            raise too_large
        try:
            body = await read_body(receive, MAX_BODY)
        except TooLargeError:
            raise too_large from None
        if SCOPE not in who.scopes:
            raise RefusedError(
                403, "forbidden", f"This API key does not have the {SCOPE} scope; create a key that has it."
            )
        if site_key is None:
            raise RefusedError(
                403,
                "forbidden",
                "This API key is made for every site, so it names no site to send events to: "
                "create an events:write key for one site.",
            )
        return _job(body, site_key)

    def _key(self, bearer: str) -> tuple[Principal, str | None]:
        with self.db.begin() as conn:
            who = keys.authenticate(conn, bearer)
            if who is None:
                raise RefusedError(401, "invalid_api_key", "This API key is unknown or was revoked.")
            return who, keys.event_site(conn, who)


def _job(body: bytes, site_key: str) -> Job:
    """The SDK's batch body for ``site_key``, and the client the caller named."""
    try:
        sent = _DECODER.decode(body)
    except msgspec.ValidationError as exc:
        text = str(exc)
        at = _AT.search(text)
        if at is None:
            message = "The body must be a JSON object with batch_id and events."
            raise RefusedError(422, "invalid_body", message) from None
        field = at.group("path")
        reason = text[: at.start()]
        reason = reason[0].lower() + reason[1:]
        raise RefusedError(422, "invalid_field", f"The field {field} is invalid: {reason}.", field) from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        raise RefusedError(400, "malformed_json", "The body is not valid JSON.") from None
    client = sent.client or Client()
    address = None
    if client.address is not None:
        parsed = parse_address(client.address)
        if parsed is None:
            raise RefusedError(
                422,
                "invalid_field",
                "The field client.address is invalid: it must be an IPv4 or IPv6 address.",
                "client.address",
            )
        address = str(parsed)
    parts = [b'"key":' + orjson.dumps(site_key)]
    for name in ("batch_id", "events", "sent_at"):
        value = getattr(sent, name)
        if bytes(value):
            parts.append(b'"%s":%s' % (name.encode(), bytes(value)))
    job = Job(b"{" + b",".join(parts) + b"}", None, client.user_agent or "", keyed=True)
    job.address = address
    return job
