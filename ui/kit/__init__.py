"""The panels' small kit: what every panel needs the same way (file downloads, for now)."""
