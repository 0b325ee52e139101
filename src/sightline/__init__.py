"""Sightline: self-hosted, privacy-first web analytics."""

__version__ = "0.1.0"
