import sys; print("bad answer"); sys.exit(1)
