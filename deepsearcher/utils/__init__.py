"""Small helpers below every other layer (no deepsearcher imports)."""
