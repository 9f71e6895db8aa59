"""The use cases between the panels (and the command line) and store, qc and exports.

After argilla-server's contexts: `annotate` (next, submit, skip, jump for any task), `decide` (an
item's state from its labels and what follows), `reports` (QC computed from the store), `data`
(imports, exports, users, studies), `access` (who may do what, checked here once). The panels and
app.py call these modules only; they call store, qc and exports.
"""
