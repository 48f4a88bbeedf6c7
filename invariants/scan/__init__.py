"""Static architecture scans (MESH000–MESH006) on libcst. Scanned code is never imported."""
