"""Runs and series: the run body, admission (estimate and launch), the run view, reads, cancel,
series, usage, and the dispatcher that hands queued runs to Ray workers."""
