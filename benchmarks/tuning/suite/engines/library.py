"""Library anchors (A-Tune's engine, Optuna, OpenTuner, SMAC): registered into :mod:`.anchors`."""
