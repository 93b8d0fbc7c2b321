"""A bounded load run on loopback: gunicorn serving the app, concurrent users, invariants checked after."""
