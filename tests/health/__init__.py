"""Tests of the health package: the disk guard on a real small file system."""
