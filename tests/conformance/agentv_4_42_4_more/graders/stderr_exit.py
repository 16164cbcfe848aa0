import sys

sys.stderr.write("boom\n")
sys.exit(3)
