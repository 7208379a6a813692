"""What things cost: devices, the model zoo, the stage cost function, energy, the calibrated GPU, measured "
"characterization records."""
