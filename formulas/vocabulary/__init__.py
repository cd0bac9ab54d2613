"""The vocabulary every formula is written in: symbols and units, the catalogue, parts, evaluation and printing."""
