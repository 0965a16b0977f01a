"""``attnflow certify``."""
