"""Cross-paper leaderboard: every random-feature map of the five papers (and ORF, SORF) at equal feature budgets."""
