"""The runner: plan jobs (test x target), run them concurrently, stream results."""
