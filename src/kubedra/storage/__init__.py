"""The revisioned Store contract and its backends."""
