"""Scheduler plugins: node filters, resource fit and dynamic resources."""
