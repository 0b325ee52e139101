"""Tests of /metrics and the request ids of the logs."""
