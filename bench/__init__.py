"""Performance yardsticks (``make bench``); never part of the unit tests."""
