"""The certified area: claims and the ``attnflow certify`` command over theory.certified (ball arithmetic)."""
