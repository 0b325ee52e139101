"""A real SMTP server for tests (aiosmtpd) on a kernel-assigned loopback port; it keeps every
message it receives, parsed as a mail client would (``email`` with the default policy)."""

from __future__ import annotations

import asyncio
import threading
import time
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session


class SmtpServer:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.recipients: list[list[str]] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server: asyncio.base_events.Server | None = None
        self.port = 0

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content: Any = envelope.content
        raw = content if isinstance(content, bytes) else str(content).encode()
        message = BytesParser(policy=policy.default).parsebytes(raw)
        assert isinstance(message, EmailMessage)
        self.messages.append(message)
        self.recipients.append(list(envelope.rcpt_tos))
        return "250 Message accepted for delivery"

    def start(self) -> SmtpServer:
        self.thread.start()

        async def listen() -> asyncio.base_events.Server:
            return await self.loop.create_server(lambda: SMTP(self), "127.0.0.1", 0)

        self.server = asyncio.run_coroutine_threadsafe(listen(), self.loop).result(10)
        self.port = int(self.server.sockets[0].getsockname()[1])
        return self

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def wait_for(self, count: int, timeout: float = 30) -> list[EmailMessage]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.messages) >= count, f"{len(self.messages)} of {count} messages arrived"
        return self.messages

    def stop(self) -> None:
        # Closed in the loop's own thread: a close from another one races the loop's own wake-up
        # of the server when a client's connection ends (asyncio's Server is not thread-safe).
        if self.server is not None:
            self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()
