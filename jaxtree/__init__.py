"""jaxtree: compact regression formulas found by a jitted greedy tree search."""
