"""The browser fixtures of the console tests (the process's kept Chromium), shared with the reports pages."""

from tests.web.conftest import browser, console

__all__ = ["browser", "console"]
