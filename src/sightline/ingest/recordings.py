"""The recorder's upload endpoint: ``POST /i/recordings/{recording_id}/chunks?key=KEY&seq=N``.

The body is one chunk, gzip-compressed JSON (``sightline.recordings.chunks``), sent by fetch with
keepalive or by sendBeacon, without a Content-Type (a CORS-simple request); ``OPTIONS`` answers
the preflight of a client that sends one anyway. Key, Origin and CORS rules are those of
``/i/events`` (PROTOCOL.md), plus the site's ``recording_enabled`` switch. Answered 202
``{"recording_id", "seq", "stored", "snapshot"}`` only after the chunk file is fsynced and its
index row committed; a ``seq`` already stored answers 202 again with ``stored: false``.
``snapshot`` says whether the recording holds a full snapshot, which is when the SDK reports its
``recordingId``. Refusals: 400 ``malformed_gzip``/``malformed_json``, 413 ``body_too_large``/
``chunk_too_large``/``recording_too_large``, 422 naming the field or ``chunk_too_deep``, 404
``unknown_site``, 403 ``origin_not_allowed``/``collection_disabled``/``recording_disabled``, 409
``recording_conflict``, 503 ``storage_unavailable``/``recordings_busy``/``recordings_unavailable``
with Retry-After. The body is decoded in the decoder process (``sightline.recordings.decoder``),
never on the server's interpreter. Headless browsers and bots get the same 202 as
everyone and nothing is stored, as on ``/i/events``.
"""

from __future__ import annotations

import logging
from collections import Counter
from urllib.parse import parse_qsl

from anyio import to_thread
from sqlalchemy.exc import DBAPIError
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from sightline.errors import ApiError
from sightline.health.disk import RECORDINGS
from sightline.ingest import agents
from sightline.ingest.beside import RefusedError, SiteEndpoint
from sightline.ingest.http import ClientGoneError, answer, cors, error_payload, request_origin
from sightline.ingest.pipeline import Pipeline
from sightline.numbers import ascii_int
from sightline.recordings import chunks
from sightline.recordings.decoder import ChunkDecoder
from sightline.recordings.service import Accepted, Recordings
from sightline.recordings.service import Client as RecordingClient
from sightline.recordings.store import RECORDING_ID, StorageUnavailableError
from sightline.sites.lookup import SiteInfo

log = logging.getLogger("sightline.ingest")

MAX_SEQ = 1_000_000
KEY_MESSAGE = "Give the site's key: ?key=KEY."


class ChunksEndpoint(SiteEndpoint):
    def __init__(
        self, pipeline: Pipeline, service: Recordings, decoder: ChunkDecoder, *, accept_headless: bool
    ) -> None:
        super().__init__(pipeline)
        self.service = service
        self.decoder = decoder
        self.accept_headless = accept_headless
        self.dropped: Counter[str] = service.drop_counts
        self.stored: Counter[str] = service.stored_counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if await self.answered_other_than_post(scope, send):
            return
        origin, agent, length = request_origin(scope)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        recording_id = str(scope["path_params"].get("recording_id", ""))
        try:
            site = await self.authorise(
                query.get("key"), origin, key_message="Give the site's key: ?key=KEY."
            )
            seq = self.check_address(recording_id, query.get("seq"), origin)
            self.refuse_when_disk_full(origin, RECORDINGS)
            body = await self.read(receive, origin, length)
            try:
                chunk = await self.decoder.decode(body)
            except ApiError as exc:
                raise RefusedError.of(exc, origin, retry=exc.status == 503) from None
            client = agents.client_of(agent[:1000])
            if client.bot or (client.headless and not self.accept_headless):
                self.dropped["bot"] += 1
                payload = {
                    "recording_id": recording_id,
                    "seq": seq,
                    "stored": False,
                    "snapshot": chunk.snapshot,
                }
                await answer(send, 202, payload, cors(origin))
                return
            seen = RecordingClient(client.browser, client.device_type)
            accepted = await to_thread.run_sync(self.store, site.id, recording_id, seq, chunk, origin, seen)
            if accepted.stored:
                self.stored["chunks"] += 1
                self.stored["bytes"] += len(chunk.stored)
        except ClientGoneError:
            return
        except RefusedError as refusal:
            self.dropped[refusal.code] += 1
            await refusal.send(send)
            return
        payload = {
            "recording_id": recording_id,
            "seq": seq,
            "stored": accepted.stored,
            "snapshot": accepted.snapshot,
        }
        await answer(send, 202, payload, cors(origin))

    def check_site(self, site: SiteInfo, origin: str | None) -> None:
        if not site.recording_enabled:
            message = "The site's owner has not switched session recording on."
            raise RefusedError(403, error_payload("recording_disabled", message), origin)

    def check_address(self, recording_id: str, raw_seq: str | None, origin: str | None) -> int:
        if not RECORDING_ID.match(recording_id):
            message = "The recording id is 16 to 64 characters of A-Z, a-z, 0-9, '_' and '-'."
            raise RefusedError(422, error_payload("invalid_field", message, "recording_id"), origin)
        seq = ascii_int(raw_seq, 0, MAX_SEQ)
        if seq is None:
            message = f"The field 'seq' is the chunk's number, 0 to {MAX_SEQ}."
            raise RefusedError(422, error_payload("invalid_field", message, "seq"), origin)
        return seq

    async def read(self, receive: Receive, origin: str | None, length: int | None) -> bytes:
        body = await self.read_capped(receive, origin, length, chunks.MAX_BODY, site_known=True)
        if not body:
            raise RefusedError(400, error_payload("malformed_gzip", "The body is empty."), origin)
        return body

    def store(
        self,
        site_id: int,
        recording_id: str,
        seq: int,
        chunk: chunks.Chunk,
        origin: str | None,
        client: RecordingClient,
    ) -> Accepted:
        try:
            return self.service.accept(site_id, recording_id, seq, chunk, client)
        except ApiError as exc:
            raise RefusedError.of(exc, origin) from None
        except (DBAPIError, OSError) as exc:
            if isinstance(exc, StorageUnavailableError):  # health says what to do; no traceback
                log.error("storing chunk %s of recording %s failed: %s", seq, recording_id, exc.problem)
            else:
                log.exception("storing chunk %s of recording %s failed", seq, recording_id)
            message = "The chunk could not be stored; try again shortly."
            raise RefusedError(
                503, error_payload("storage_unavailable", message), origin, retry=True
            ) from None


def routes(
    pipeline: Pipeline, service: Recordings, decoder: ChunkDecoder, *, accept_headless: bool
) -> list[BaseRoute]:
    """The recorder's route, for ``app.create_app`` to put beside ingest's."""
    endpoint = ChunksEndpoint(pipeline, service, decoder, accept_headless=accept_headless)
    return [Route("/i/recordings/{recording_id}/chunks", endpoint)]
