import sys

print("bad thing")
sys.exit(1)
