"""Expert NKI ports of the bench jobs, written from the documented NKI techniques (blocking for
reuse, large DMAs, engine balancing); the yardstick generated ports are measured against."""
