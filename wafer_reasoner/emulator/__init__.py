"""The wafer-scale timing emulator (hardware profiles, target models, timing model)."""
