"""Experimental APIs with DALI 2.4's names: ``dynamic`` (DALI's
``nvidia.dali.experimental.dynamic``, "dynamic mode"): operators called on arrays
directly, outside any pipeline definition, for debugging and interactive work."""
