print("looks fine")
