"""CEL environments for named-resources selectors: compile, cache, evaluate with bounded cost."""
