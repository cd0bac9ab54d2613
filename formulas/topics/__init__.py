"""The topic formulas: parameters, FLOPs, memory, communication, cluster sizing, serving, performance."""
