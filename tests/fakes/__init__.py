"""Real servers for tests (HTTP on 127.0.0.1), not mocks of our own functions."""
