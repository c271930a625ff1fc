"""Admission: the run body (`body`), the one function that decides whether it may launch and what it
would cost (`admit`), the seat layer as a launch sees it (`seats`), a fork's body and records
(`forks`), and what the account holds while it launches (`ledger`)."""
