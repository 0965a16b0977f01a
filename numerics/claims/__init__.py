"""Claim modules for ``attnflow verify``, one per area; every module here is imported by the registry."""
