print("stratactl")
