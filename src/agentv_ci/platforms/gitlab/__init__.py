"""GitLab CI: its job-log sections (`log`)."""
