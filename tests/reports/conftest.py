"""The browser fixtures of the console tests (one Chromium per module), shared with the reports page tests."""

from tests.web.conftest import browser, console, playwright

__all__ = ["browser", "console", "playwright"]
