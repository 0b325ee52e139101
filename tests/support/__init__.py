"""Test support: a throwaway PostgreSQL server, live Sightline servers, HTTP helpers."""
