"""Run logs read back: which runs there are (``reader``), what happened in each attempt, agent by agent
(``story``), told as text (``account``) or drawn as one self-contained HTML page (``report``)."""
