"""Defaults of recall settings that are not fitted, in a leaf module (it imports nothing) so that
`memory.config` names them without importing recall; the fitted weights: `memory.recall.scoring`."""

#: Log-odds recall adds for a fresh memory (a small prior the benchmarks cannot measure).
W_RECENCY = 0.25
#: Log-odds per unit of importance above 0.5 (pinned counts as 1).
W_IMPORTANCE = 0.5
#: default RECALL_MIN_SCORE: hits whose final score is below it are dropped.
MIN_SCORE = 0.01
