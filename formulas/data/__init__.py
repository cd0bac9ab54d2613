"""What formulas are evaluated on: config.json readers, families, quantization, presets, GPUs, frameworks, layouts and published figures."""
