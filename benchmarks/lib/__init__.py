"""What the benchmark scripts share; `make bench` runs benchmarks/*.py, not this package."""
