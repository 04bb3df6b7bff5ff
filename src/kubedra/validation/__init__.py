"""Pure defaulting and validation functions returning upstream-shaped field errors."""
