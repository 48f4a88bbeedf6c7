"""The reference mesh: a deterministic, virtual-time model of an actor mesh."""
