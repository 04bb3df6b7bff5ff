"""The named-resources structured model: free-instance index, joint allocation, explanations."""
