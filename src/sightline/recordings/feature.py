"""The recordings feature for one running server: its store, service and health probe."""

from __future__ import annotations

from sightline.health.registry import DEGRADED, OK, HealthRegistry, ServiceReport
from sightline.recordings.decoder import ChunkDecoder
from sightline.recordings.service import Recordings
from sightline.recordings.store import FileChunkStore
from sightline.settings import Settings
from sightline.storage import Database, open_database

MIB = 1024 * 1024
LOW_DISK = 1 << 30


def build(settings: Settings, db: Database) -> Recordings:
    """Chunks as files under ``DATA_DIR/recordings``, indexed in ``db``."""
    store = FileChunkStore(settings.data_path / "recordings")
    return Recordings(db, store, int(settings.recording_max_mb) * MIB)


def open_service(settings: Settings) -> tuple[Recordings, Database]:
    db = open_database(settings.effective_database_url)
    return build(settings, db), db


def register_health(service: Recordings, health: HealthRegistry, decoder: ChunkDecoder) -> None:
    """Health service ``recordings``: how many there are, the bytes they use, the decoder process."""

    def probe() -> ServiceReport:
        count, size = service.totals()
        figures: dict[str, object] = {
            "recordings": count,
            "used_bytes": size,
            "dropped_chunks": dict(service.drop_counts),
            "decoder": decoder.figures(),
        }
        status = OK
        if isinstance(service.store, FileChunkStore):
            free = service.store.free_bytes()
            figures["free_bytes"] = free
            status = DEGRADED if free < LOW_DISK else OK
        return ServiceReport(status, figures)

    health.register("recordings", probe)
