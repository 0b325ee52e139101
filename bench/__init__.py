"""Benchmarks of Sightline's hot paths. `make bench` runs every `bench/bench_*.py` module's `main()`."""
