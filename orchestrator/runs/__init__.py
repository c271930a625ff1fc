"""Runs and series, by concern: `admission` (the run body, estimate and launch checks, forks at
launch, the account's ledger), `kinds` (what differs between the world and an arena game), `series`
(a series' read, its summaries, when it stops), `head` (the dispatcher, the model pool, the archiver),
`pages` (a played match's public pages and the owner's transcript); beside them the run's state
(`lifecycle`), its view (`views`) and the service functions REST, MCP and Python call (`service`,
`agent_turns`, `usage`, `analysis`, `exports`)."""
