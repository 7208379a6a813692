"""Units more than one paper instantiates (the softmax unit: Duplex's, and Hermes' activation unit's)."""
