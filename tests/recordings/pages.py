"""The customer's site of the recording tests: the shared shop with a style worth replaying."""

from __future__ import annotations

from tests.support.shop import Shop

STYLE = (
    "body{margin:0;font:16px/1.4 sans-serif;background:#f4f1ea;color:#1d2433}"
    "header{background:#1f4e79;color:#fff;padding:24px}"
    ".cards{display:flex;gap:16px;padding:24px}"
    ".card{flex:1;height:140px;border-radius:12px}"
    ".a{background:#e07a5f}.b{background:#3d405b}.c{background:#81b29a}"
    "footer{margin:24px;padding:16px;border:4px solid #f2cc8f}"
)


WELCOME = "<h1>Shop</h1><p>Welcome.</p>"


def recorded_shop() -> Shop:
    """The shared customer shop, styled so that a replay has colours and shapes to compare."""
    return Shop(style=STYLE, body=WELCOME)
