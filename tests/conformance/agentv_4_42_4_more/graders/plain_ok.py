print("all good here")
