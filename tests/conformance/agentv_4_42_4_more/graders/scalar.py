print("0.4")
