"""The derivation engine, its proof primitives, its cache and the LaTeX of its steps."""
