"""Ferry: a small message mesh whose nodes talk only through one broker."""
