"""Tests of sightline backup / restore."""
