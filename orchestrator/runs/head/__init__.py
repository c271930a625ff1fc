"""The head: the dispatcher that hands queued runs to Ray workers and records what comes back, the
model workers it places (`modelpool`), and the archiver that exports and compacts ended runs."""
