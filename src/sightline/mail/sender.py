"""Sending one message through the SMTP server of ``--smtp-url``, with the standard library.

``smtp://[user:pass@]host[:port]`` (default port 25; STARTTLS when the server offers it) or
``smtps://...`` (TLS from the start, default port 465). The message is multipart/alternative:
plain text first, then HTML, as mail clients expect. A digest or notice carries the recipient's
unsubscribe link as ``List-Unsubscribe`` with ``List-Unsubscribe-Post: List-Unsubscribe=One-Click``
(RFC 8058), so mail clients offer their own one-click button.
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import formataddr, make_msgid
from urllib.parse import unquote, urlsplit

from sightline.text import one_line

# Headers folded only beyond SMTP's 998 characters: Python's folding at 78 moves a whole subject
# to a continuation line, which mail clients then show with a leading space. The parts are
# encoded before this policy is set, so bodies keep their 78-character lines.
HEADERS = policy.default.clone(max_line_length=998)


@dataclass(frozen=True)
class Mailer:
    host: str
    port: int
    tls: bool
    username: str | None
    password: str | None
    sender: str
    timeout: float = 20.0

    @classmethod
    def from_url(cls, url: str, sender: str) -> Mailer:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("the SMTP URL looks like smtp://user:pass@mail.example.com:587")
        tls = parts.scheme == "smtps"
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if tls else 25),
            tls=tls,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            sender=sender,
        )

    def message(
        self, to: str, subject: str, text: str, html: str, unsubscribe: str | None = None
    ) -> EmailMessage:
        message = EmailMessage()
        message["From"] = formataddr(("Sightline", self.sender))
        message["To"] = to
        message["Subject"] = one_line(subject)  # a site named before names were checked
        message["Message-ID"] = make_msgid(domain=self.sender.rsplit("@", 1)[-1])
        if unsubscribe is not None:
            message["List-Unsubscribe"] = f"<{unsubscribe}>"
            message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
        message.set_content(text)
        message.add_alternative(html, subtype="html")
        message.policy = HEADERS
        return message

    def send(self, to: str, subject: str, text: str, html: str, *, unsubscribe: str | None = None) -> None:
        message = self.message(to, subject, text, html, unsubscribe)
        context = ssl.create_default_context()
        if self.tls:
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                self.host, self.port, timeout=self.timeout, context=context
            )
        else:
            client = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
        with client:
            client.ehlo()
            if not self.tls and client.has_extn("starttls"):
                client.starttls(context=context)
                client.ehlo()
            if self.username is not None:
                client.login(self.username, self.password or "")
            client.send_message(message)
