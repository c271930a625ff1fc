"""Series: their read (`read`: GET /batches/:id and its long-poll), their summaries (`summaries`,
`summary_text`, `summarizer`, `summary_task`), a forked series' effect (`fork_effect`), and when a
series stops (`until` at admission, `stopping` in the dispatcher)."""
