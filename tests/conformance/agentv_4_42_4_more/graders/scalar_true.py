print("true")
