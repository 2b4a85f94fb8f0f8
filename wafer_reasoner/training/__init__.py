"""Training code (corpus generator, model, export). Needs the [train] extra; never imported by the node."""
