print("keygate")
