"""The memory-quality harness: the labelled suite, calibration and LoCoMo, run through the real paths."""
