"""The writer process: the group commit's storing half, in a process of its own.

Started by the server (``writer.GroupCommitter``) as ``python -m sightline.ingest.writer_process
READ_FD WRITE_FD``; it talks to the server only through those two pipes (``protocol.py``).
It reads whatever batches are waiting in its pipe, expands each into rows (``rows.py``: the
per-event part of enrichment), stores them all in one transaction (``log_writer.LogWriter``), and then
sends one ``Outcome`` that settles every batch of the group. There is no waiting window: while
it commits, the next batches collect in the pipe and form the next group.

Why a process: storing costs several microseconds of interpreter time per event (enrichment,
binding 19 values); in the server's process that time competed with the event loop for the
interpreter lock. Here it runs on the other core, and the server's loop only parses, validates
and answers.

It stops when its input pipe closes, after committing and answering every whole batch it read:
at a graceful shutdown the server closes the pipe and waits; when the server dies (even by
SIGKILL) the pipe closes too, so the writer never outlives it by more than a commit. SIGINT and
SIGTERM sent to the whole process group are ignored for that reason: the server decides.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time

import msgspec

from sightline import logs
from sightline.database import Database
from sightline.geo import GeoDatabaseError, Locator
from sightline.ingest import batch
from sightline.ingest.log_writer import LogWriter, Rows, null_for
from sightline.ingest.outage import WriterOutage
from sightline.ingest.protocol import (
    DUPLICATE,
    FAILED,
    REFUSED,
    STORED,
    Frames,
    Hello,
    Outcome,
    Ready,
    Submit,
    frame,
)
from sightline.ingest.rows import event_rows
from sightline.ingest.times import time_param_for
from sightline.sites.traffic import TrafficMarker
from sightline.visitors.codes import ANONYMOUS, DailySalts, Visits, visitor_code

log = logging.getLogger("sightline.ingest")

READ_SIZE = 1 << 20  # bytes per read: a pipe holds at most this much (F_SETPIPE_SZ)


class Writer:
    def __init__(self, db: Database, out_fd: int, locator: Locator | None = None) -> None:
        self.db = db
        self.out_fd = out_fd
        self.locator = locator or Locator()
        self.salts = DailySalts(db)
        self.visits = Visits()
        self.log_writer = LogWriter(db, TrafficMarker())
        self.time_param = time_param_for(db.dialect)
        self.null = null_for(db.dialect)
        self.outage = WriterOutage(db)
        self._submits = msgspec.msgpack.Decoder(Submit)
        self._encoder = msgspec.msgpack.Encoder()

    def run(self, in_fd: int, frames: Frames, first: list[bytes]) -> None:
        """Group after group until the input pipe closes (``first``: batches read already)."""
        try:
            if first:
                self.commit_group([self._submits.decode(p) for p in first])
            while True:
                data = os.read(in_fd, READ_SIZE)
                if not data:
                    if frames.pending:
                        log.warning("ingest writer: input closed in the middle of a batch (never answered)")
                    return
                payloads = frames.feed(data)
                if payloads:
                    self.commit_group([self._submits.decode(p) for p in payloads])
        finally:
            self.log_writer.release()

    def commit_group(self, submits: list[Submit]) -> None:
        started = time.perf_counter()
        codes: dict[int, int] = {}
        group: list[tuple[int, Rows]] = []
        for submit in submits:
            rows = self._rows(submit)
            if isinstance(rows, int):
                codes[submit.seq] = rows
            else:
                group.append((submit.seq, rows))
        codes.update(self._commit(group))
        elapsed = (time.perf_counter() - started) * 1000
        seqs = [s.seq for s in submits]
        self._send(Outcome(seqs, [codes[s] for s in seqs], round(elapsed, 3)))
        if self.log_writer.prune_due():
            self._prune()

    def _rows(self, submit: Submit) -> Rows | int:
        """The batch's rows; REFUSED (logged) if its body does not decode, which the server's own
        validation of the same bytes rules out; FAILED when a cookieless site's salt cannot be
        read (the batch is answered 503 and sent again)."""
        try:
            decoded = batch.check_numbers(batch.decode(submit.body))
        except batch.BatchError as exc:
            log.error("ingest writer: batch %d does not decode here: %s", submit.seq, exc.message)
            return REFUSED
        if submit.cookieless:
            try:
                decoded = self._cookieless(submit, decoded)
            except Exception as exc:
                self.outage.failed(exc, 1, "today's visitor salt could not be read")
                return FAILED
        agent = (submit.browser, submit.os, submit.device_type)
        place = self.locator.locate(submit.address)  # once per batch: one client sent it
        values = event_rows(
            decoded,
            submit.site_id,
            submit.site_host,
            agent,
            submit.received_us,
            self.time_param,
            self.null,
            place,
            submit.language,
        )
        return Rows(submit.site_id, decoded.batch_id, len(decoded.events), values)

    def _cookieless(self, submit: Submit, decoded: batch.Batch) -> batch.Batch:
        """Visitor codes from today's salt (unless the site identified the visitor) and visits
        cut on 30 idle minutes, both worked out here: the browser keeps nothing."""
        salt = self.salts.current()
        derived = visitor_code(salt, submit.site_id, submit.address, submit.user_agent)
        replace = msgspec.structs.replace
        events = []
        for event in decoded.events:
            code = derived if event.visitor_id == ANONYMOUS else event.visitor_id
            events.append(
                replace(event, visitor_id=code, session_id=self.visits.visit(code, submit.received_us))
            )
        return replace(decoded, events=events)

    def _commit(self, group: list[tuple[int, Rows]]) -> dict[int, int]:
        """Each batch's code: one transaction for the group; when the database refuses the data
        of one batch, the others are stored one by one so that it cannot sink its neighbours."""
        if not group:
            return {}
        unavailable, refused_data = self.log_writer.errors
        try:
            stored = self.log_writer.commit([rows for _, rows in group])
        except unavailable as exc:
            self.outage.failed(exc, len(group))
            return dict.fromkeys((seq for seq, _ in group), FAILED)
        except refused_data:
            if len(group) == 1:
                log.exception("ingest writer: the database refused batch %s", group[0][1].batch_id)
                return {group[0][0]: REFUSED}
            log.warning("ingest writer: retrying a refused group of %d batches one by one", len(group))
            return self._one_by_one(group)
        except Exception as exc:
            self.outage.failed(exc, len(group))
            return dict.fromkeys((seq for seq, _ in group), FAILED)
        self.outage.stored()
        return _codes(group, stored)

    def _one_by_one(self, group: list[tuple[int, Rows]]) -> dict[int, int]:
        codes: dict[int, int] = {}
        for seq, rows in group:
            try:
                codes.update(_codes([(seq, rows)], self.log_writer.commit([rows])))
            except Exception:
                log.exception("ingest writer: the database refused batch %s", rows.batch_id)
                codes[seq] = REFUSED
        return codes

    def _send(self, message: Outcome | Ready) -> None:
        data = memoryview(frame(self._encoder, message))
        while data:
            written = os.write(self.out_fd, data)
            data = data[written:]

    def _prune(self) -> None:
        try:
            removed = self.log_writer.prune()
        except Exception:
            log.exception("ingest writer: pruning old batch ids failed")
            return
        if removed:
            log.info("ingest writer: forgot %d batch ids older than the retention", removed)


def _codes(group: list[tuple[int, Rows]], stored: set[tuple[int, str]]) -> dict[int, int]:
    """STORED for the first of the group's batches with a newly stored id, DUPLICATE otherwise
    (stored before, or a second copy of a batch within the group)."""
    codes: dict[int, int] = {}
    answered: set[tuple[int, str]] = set()
    for seq, rows in group:
        key = rows.key
        codes[seq] = STORED if key in stored and key not in answered else DUPLICATE
        answered.add(key)
    return codes


def read_hello(in_fd: int, frames: Frames) -> tuple[Hello, list[bytes]]:
    """The server's Hello, and any frames that came with it."""
    while True:
        data = os.read(in_fd, READ_SIZE)
        if not data:
            raise SystemExit(0)  # the server went away before saying anything
        payloads = frames.feed(data)
        if payloads:
            return msgspec.msgpack.decode(payloads[0], type=Hello), payloads[1:]


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    in_fd, out_fd = int(argv[1]), int(argv[2])
    frames = Frames()
    hello, first = read_hello(in_fd, frames)
    logs.configure(hello.log_level, hello.log_format)
    try:
        locator = Locator(hello.geoip_database)
    except GeoDatabaseError as exc:  # the server checked it at start; it changed since
        log.error("ingest writer: %s; countries only", exc)
        locator = Locator()
    writer = Writer(Database(hello.database_url), out_fd, locator)
    writer._send(Ready(os.getpid()))
    try:
        writer.run(in_fd, frames, first)
    except BrokenPipeError:
        log.warning("ingest writer: the server stopped listening; stopping")
    finally:
        writer.db.dispose()
        writer.locator.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
