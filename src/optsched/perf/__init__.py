"""Performance models: the per-iteration time of a job under a placement and its co-located jobs."""
