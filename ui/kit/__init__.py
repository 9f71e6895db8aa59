"""The panel kit: what every panel uses the same way (named outputs, messages, downloads, drafts).

Drafts live in services.drafts (per user, on the server); this package holds the UI side only.
"""
