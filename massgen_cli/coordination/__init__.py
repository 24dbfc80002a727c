"""Coordination: agents answer in parallel, see each other's answers, refine or vote; the winner presents."""
