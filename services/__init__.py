"""The use cases between the panels (and the command line) and store, qc and exports.

After argilla-server's contexts: `annotate` (next, submit, skip, jump for any task), `decide` (an
item's state from its labels), `reports` (QC computed from the store), `data` (imports, datasets),
`users`, `studies`, `jobs`. Who may do what is checked in `access`, once, for an explicit actor (a
user, or OPERATOR at the command line). What follows a decision and what runs each job kind are
extension points (`hooks`) that `compose` fills with the default behaviour (`defaults`) when the app
is composed, together with the store's leases (`leasing`). The panels and app.py call these modules
only; they call store, qc and exports. No module of this package imports another in a circle.
"""
