"""``attnflow long-context``."""
