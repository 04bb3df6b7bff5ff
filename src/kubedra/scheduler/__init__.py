"""Scheduler that allocates structured claims and binds pods."""
